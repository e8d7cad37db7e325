import Foundation
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// The requests a first sync makes, counted at a proxy in front of the store: beyond its own
    /// write, a new document must cost no request, so that the count of everything else does
    /// not grow with the documents.
    @Suite(.serialized) struct SyncRoundTripTests {
        /// The requests, by method, of a first sync to S3 of `count` new documents, half of them
        /// in a folder.
        private static func firstSyncRequests(_ count: Int, name: String) throws -> [String: Int] {
            var configuration = try S3Servers.configuration(prefix: S3Servers.freshPrefix(name))
            let proxy = try FaultProxy(target: configuration.endpoint!, rewritesHost: false)
            defer { proxy.stop() }
            configuration.endpoint = proxy.url(for: configuration.endpoint!)
            let remote = try S3Remote(configuration)
            let folder = try TemporaryFolder(name)
            let device = try SyncDevice("a", remote: remote, in: folder)
            for index in 0..<count {
                let path = index.isMultiple(of: 2) ? "doc\(index).txt" : "Folder/doc\(index).txt"
                try device.write(path, "document \(index)\n")
            }
            let before = proxy.requestCount
            try device.sync()
            var methods: [String: Int] = [:]
            for request in proxy.requests.dropFirst(before) { methods[request.method, default: 0] += 1 }
            return methods
        }

        /// S3 has no folders to look for: the pass's listing knows each new document's folder,
        /// so a document costs its `PUT` and nothing more (it cost two listings more before).
        @Test func aNewDocumentOnS3CostsItsPutAndNoLookup() throws {
            let few = try Self.firstSyncRequests(4, name: "roundtrips-few")
            let many = try Self.firstSyncRequests(24, name: "roundtrips-many")
            #expect(many["PUT", default: 0] - few["PUT", default: 0] == 20, "few \(few), many \(many)")
            func others(_ counts: [String: Int]) -> Int {
                counts.filter { $0.key != "PUT" }.values.reduce(0, +)
            }
            #expect(others(many) == others(few), "few \(few), many \(many)")
        }
    }
}
