import Foundation
import Testing

@testable import DocumentSync

/// The reader that cuts an upload's source into multipart parts.
@Suite struct S3PartReaderTests {
    /// Parts of every size against chunks of every size (smaller, equal, larger, not a divisor):
    /// the parts are the source's bytes in order, each as long as asked but the last.
    @Test(arguments: [1, 3, 7, 8, 64])
    func partsAreTheSourceInOrderWhateverTheChunks(chunkSize: Int) throws {
        let bytes = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 * 31 + 7) })
        for partSize in [1, 5, 8, 100, 999, 1000, 4096] {
            let reader = S3Remote.PartReader(UploadSource(bytes, chunkSize: chunkSize))
            var joined = Data()
            while true {
                let part = try reader.next(partSize)
                if part.isEmpty { break }
                #expect(part.count == partSize || joined.count + part.count == bytes.count)
                joined.append(part)
            }
            #expect(joined == bytes, "chunks of \(chunkSize), parts of \(partSize)")
            #expect(try reader.next(1).isEmpty)
        }
    }

    /// A source that fails fails the part being read.
    @Test func aFailingSourceFailsThePart() throws {
        struct Broken: Error {}
        var given = 0
        let reader = S3Remote.PartReader(
            UploadSource(size: 100) {
                given += 1
                if given > 2 { throw Broken() }
                return Data(repeating: 1, count: 10)
            })
        #expect(try reader.next(15).count == 15)
        #expect(throws: Broken.self) { try reader.next(15) }
    }
}
