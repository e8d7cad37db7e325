import Foundation
import Testing

@testable import DocumentKit

/// Chunk names are SHA-256 digests: stores written before libcrypto computed them must stay
/// readable, so the digests must be FIPS 180-4's to the bit, whole or in pieces.
@Suite struct ContentHashTests {
    /// FIPS 180-4 (and its examples document) known answers.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func knownAnswers(message: String, digest: String) {
        #expect(ContentHash(of: Data(message.utf8)).hex == digest)
        let hex = Data(message.utf8).withUnsafeBytes { ContentHash(of: $0).hex }
        #expect(hex == digest)
    }

    @Test func millionLetterAsHasKnownDigest() {
        let message = Data(repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(
            ContentHash(of: message).hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    /// Pieces of every awkward size (inside a 64-byte block, across one, empty) give the
    /// digest of the whole.
    @Test func piecesGiveTheDigestOfTheWhole() {
        let message = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) })
        let whole = ContentHash(of: message)
        var hasher = ContentHash.Hasher()
        var offset = 0
        for size in [0, 1, 63, 64, 65, 0, 127, 1000, 3] {
            hasher.update(message[offset..<offset + size])
            offset += size
        }
        hasher.update(message[offset...])
        #expect(hasher.finalize() == whole)
        #expect(whole != ContentHash(of: message.dropLast()))
    }

    /// A multi-MiB file, hashed in memory and from disk, against coreutils' `sha256sum` run
    /// as a real process.
    @Test func largeFileMatchesSha256sum() throws {
        let tree = try TemporaryTree()
        let url = tree.file("large.bin")
        var generator = SplitMix(seed: 12)
        // 5 MiB and 77 bytes: several read blocks and a partial last one.
        let bytes = Data((0..<(5 << 20) + 77).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        try bytes.write(to: url)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [url.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let expected = String(decoding: printed, as: UTF8.self).split(separator: " ").first.map(String.init)

        #expect(ContentHash(of: bytes).hex == expected)
        #expect(try ContentHash(contentsOf: url).hex == expected)
    }

    @Test func hashingAMissingFileNamesIt() throws {
        let tree = try TemporaryTree()
        let missing = tree.file("missing.bin")
        let error = #expect(throws: DocumentKitError.self) { try ContentHash(contentsOf: missing) }
        #expect(error?.url == missing)
    }

    @Test(arguments: [
        ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", true),
        ("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855", false),
        ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85", false),
        ("../../../../etc/passwd000000000000000000000000000000000000000000", false),
    ])
    func onlyDigestShapedNamesAreValid(name: String, valid: Bool) {
        #expect(ContentHash.isValid(name) == valid)
    }
}

/// A small deterministic generator, so a failing run can be repeated.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
