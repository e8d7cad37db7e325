import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Signing against AWS's published examples, and what S3 adds to the conformance every remote
/// passes: multipart uploads, stale uploads, moves finished after a crash, bad input.
@Suite struct S3SigningTests {
    /// The credentials and time of the examples in AWS's "Signature Calculations for the
    /// Authorization Header: Transferring Payload in a Single Chunk (AWS Signature Version 4)".
    let signer = S3Signer(
        credentials: S3Credentials(
            accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    let date = Date(timeIntervalSince1970: 1_369_353_600)  // 20130524T000000Z
    let host = "examplebucket.s3.amazonaws.com"

    func signature(_ headers: [String: String]) -> String? {
        headers["Authorization"]?.components(separatedBy: "Signature=").last
    }

    @Test func getObjectWithARange() {
        let headers = signer.headers(
            method: "GET", host: host, path: "/test.txt", query: [], headers: ["Range": "bytes=0-9"],
            payloadHash: S3Signer.emptyPayloadHash, date: date)
        #expect(headers["x-amz-date"] == "20130524T000000Z")
        #expect(
            headers["Authorization"]?.hasPrefix(
                "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                    + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, ") == true)
        #expect(signature(headers) == "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func putObjectWithAnEncodedKeyAndAStorageClass() {
        let body = Data("Welcome to Amazon S3.".utf8)
        let hash = S3Signer.sha256Hex(body)
        #expect(hash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let headers = signer.headers(
            method: "PUT", host: host, path: "/" + S3Signer.encode("test$file.text", keepingSlashes: true),
            query: [],
            headers: ["Date": "Fri, 24 May 2013 00:00:00 GMT", "x-amz-storage-class": "REDUCED_REDUNDANCY"],
            payloadHash: hash, date: date)
        #expect(
            headers["Authorization"]?.contains(
                "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,") == true)
        #expect(signature(headers) == "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    /// AWS's example of a chunked upload ("Transferring Payload in Multiple Chunks"): 66,560
    /// bytes of "a" in chunks of 64 KiB, the seed signature of its headers, each chunk's, and
    /// the body's length with its frames.
    @Test func putObjectInSignedChunks() throws {
        let headers = signer.headers(
            method: "PUT", host: "s3.amazonaws.com", path: "/examplebucket/chunkObject.txt", query: [],
            headers: [
                "Content-Encoding": "aws-chunked", "Content-Length": "66824",
                "x-amz-decoded-content-length": "66560", "x-amz-storage-class": "REDUCED_REDUNDANCY",
            ],
            payloadHash: S3Signer.streamingPayload, date: date)
        let seed = try #require(signature(headers))
        #expect(seed == "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9")
        #expect(S3Signer.chunkedSize(of: 66_560, chunkSize: 65_536) == 66_824)
        let body = S3Signer.chunkedBody(
            of: UploadSource(Data(repeating: UInt8(ascii: "a"), count: 66_560), chunkSize: 10_000),
            chunkSize: 65_536, signer: S3Signer.ChunkSigner(signer, stamp: "20130524T000000Z", seed: seed))
        #expect(body.size == 66_824)
        var sent = Data()
        while let chunk = try body.nextChunk() { sent.append(chunk) }
        let a = { (count: Int) in String(repeating: "a", count: count) }
        let expected =
            "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n"
            + a(65_536) + "\r\n"
            + "400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n"
            + a(1_024) + "\r\n"
            + "0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n"
        #expect(sent == Data(expected.utf8))
        // Sizes on and around a chunk's edge frame to the length said beforehand.
        for size in [0, 1, 65_535, 65_536, 65_537, 3 * 65_536] {
            let framed = S3Signer.chunkedBody(
                of: UploadSource(Data(count: size), chunkSize: 7_777), chunkSize: 65_536,
                signer: S3Signer.ChunkSigner(signer, stamp: "20130524T000000Z", seed: seed))
            var count = 0
            while let chunk = try framed.nextChunk() { count += chunk.count }
            #expect(Int64(count) == framed.size, "\(size) bytes")
        }
    }

    @Test func getBucketLifecycleAQueryWithoutValue() {
        let headers = signer.headers(
            method: "GET", host: host, path: "/", query: [("lifecycle", "")], headers: [:],
            payloadHash: S3Signer.emptyPayloadHash, date: date)
        #expect(signature(headers) == "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543")
    }

    @Test func listObjectsWithAQuerySortedByName() {
        let headers = signer.headers(
            method: "GET", host: host, path: "/", query: [("prefix", "J"), ("max-keys", "2")], headers: [:],
            payloadHash: S3Signer.emptyPayloadHash, date: date)
        #expect(signature(headers) == "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7")
        #expect(S3Signer.queryString([("prefix", "J"), ("max-keys", "2")]) == "max-keys=2&prefix=J")
    }

    @Test func aTemporaryKeysTokenIsSentAndSigned() {
        var temporary = signer
        temporary.credentials.sessionToken = "token/with+signs"
        let headers = temporary.headers(
            method: "GET", host: host, path: "/", query: [], headers: [:],
            payloadHash: S3Signer.emptyPayloadHash,
            date: date)
        #expect(headers["x-amz-security-token"] == "token/with+signs")
        #expect(headers["Authorization"]?.contains("x-amz-date;x-amz-security-token,") == true)
    }

    /// AWS's "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)"
    /// example: a presigned GET of test.txt for a day, the URL as the page prints it.
    @Test func aPresignedGetIsAWSsPublishedExample() {
        let query = signer.presignedQuery(host: host, path: "/test.txt", lifetime: 86_400, date: date)
        let published: String = [
            "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256",
            "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request",
            "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host",
            "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
        ].joined()
        #expect("https://\(host)/test.txt?\(query)" == published)
        #expect(!query.contains(signer.credentials.secretAccessKey))
        // Temporary credentials: the token is in the query, and signed.
        var temporary = signer
        temporary.credentials.sessionToken = "token/with+signs"
        let withToken = temporary.presignedQuery(host: host, path: "/test.txt", lifetime: 86_400, date: date)
        #expect(withToken.contains("&X-Amz-Security-Token=token%2Fwith%2Bsigns&X-Amz-SignedHeaders=host"))
        #expect(withToken.suffix(64) != query.suffix(64))
    }

    @Test func keysAreEncodedAsS3WantsThem() {
        #expect(S3Signer.encode("a b/ü~+*.txt", keepingSlashes: true) == "a%20b/%C3%BC~%2B%2A.txt")
        #expect(S3Signer.encode("a/b", keepingSlashes: false) == "a%2Fb")
    }

    @Test func theSecretIsNeverInADescription() {
        let credentials = S3Credentials(
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: "s3cr3t", sessionToken: "t0k3n")
        #expect(credentials.description == "the access key of the credentials given")
        #expect(!"\(credentials)".contains("s3cr3t") && !"\(credentials)".contains("AKIDEXAMPLE"))
    }

    @Test func credentialsComeFromTheEnvironmentThenTheProfileAWSProfileNames() throws {
        let folder = try TemporaryFolder("s3-credentials")
        let file = folder.url.appendingPathComponent(".aws/credentials")
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try """
        # a comment
        [default]
        aws_access_key_id = AKIADEFAULT
        aws_secret_access_key = secret-default

        [work]
        aws_access_key_id=AKIAWORK
        aws_secret_access_key=secret-work
        aws_session_token = token-work
        [broken]
        aws_access_key_id = AKIABROKEN
        """.write(to: file, atomically: true, encoding: .utf8)
        let environment = ["HOME": folder.url.path]
        #expect(try S3CredentialSources(environment: environment).credentials().accessKeyID == "AKIADEFAULT")
        let work = try S3CredentialSources(environment: environment.merging(["AWS_PROFILE": "work"]) { $1 })
            .credentials()
        #expect(
            work
                == S3Credentials(
                    accessKeyID: "AKIAWORK", secretAccessKey: "secret-work", sessionToken: "token-work",
                    source: "the [work] profile in \(file.path)"))
        // The remote's own profile, unless AWS_PROFILE names another.
        #expect(
            try S3CredentialSources(environment: environment, profile: "work").credentials().accessKeyID
                == "AKIAWORK")
        let fromEnvironment = try S3CredentialSources(
            environment: environment.merging([
                "AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "secret-env",
                "AWS_SESSION_TOKEN": "token-env",
            ]) { $1 }
        ).credentials()
        #expect(
            fromEnvironment
                == S3Credentials(
                    accessKeyID: "AKIAENV", secretAccessKey: "secret-env", sessionToken: "token-env",
                    source: "AWS_ACCESS_KEY_ID in the environment"))

        func failure(_ sources: S3CredentialSources) -> String {
            do {
                _ = try sources.credentials()
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        #expect(
            failure(S3CredentialSources(environment: ["AWS_ACCESS_KEY_ID": "AKIA"])).contains(
                "AWS_SECRET_ACCESS_KEY is not"))
        #expect(
            failure(S3CredentialSources(environment: environment, profile: "none")).contains(
                "has no [none] profile"))
        let broken = failure(S3CredentialSources(environment: environment, profile: "broken"))
        #expect(broken.contains("[broken]") && broken.contains("aws_secret_access_key"))
        let elsewhere = folder.url.appendingPathComponent("other")
        let missing = failure(
            S3CredentialSources(environment: ["AWS_SHARED_CREDENTIALS_FILE": elsewhere.path]))
        #expect(missing.contains("AWS_ACCESS_KEY_ID") && missing.contains(elsewhere.path))
        // No failure shows a secret it read.
        #expect(!broken.contains("secret-default") && !broken.contains("secret-work"))
    }
}

/// An S3 remote whose first move stops after its copy, as a crash between the copy and the
/// delete leaves it: the item at both paths.
final class HalfMovingRemote: Remote {
    let base: S3Remote
    private let stops = Mutex(true)

    init(_ base: S3Remote) { self.base = base }

    var displayName: String { base.displayName }
    var hasFileIDs: Bool { base.hasFileIDs }
    var movesAreAtomic: Bool { base.movesAreAtomic }
    func list(_ folder: RemotePath) throws -> RemoteListing { try base.list(folder) }
    func listTree(keeping: @escaping @Sendable (RemotePath, RemoteEntry) -> Bool) throws -> [RemotePath:
        RemoteEntry]?
    {
        try base.listTree(keeping: keeping)
    }
    func entry(at path: RemotePath) throws -> RemoteEntry? { try base.entry(at: path) }
    func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
        try base.read(path, into: sink)
    }
    func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws -> RemoteTag?
    {
        try base.write(path, from: source, condition: condition)
    }
    func delete(_ path: RemotePath, condition: WriteCondition) throws {
        try base.delete(path, condition: condition)
    }
    func makeFolder(_ path: RemotePath) throws { try base.makeFolder(path) }
    func finishMove(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws {
        try base.finishMove(source, to: destination, condition: condition)
    }
    func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
        -> RemoteTag?
    {
        guard
            stops.withLock({ stops in
                defer { stops = false }
                return stops
            })
        else {
            return try base.move(source, to: destination, condition: condition)
        }
        var bytes = Data()
        _ = try base.read(source) { bytes.append($0) }
        try base.write(destination, from: UploadSource(bytes), condition: .absent)
        throw RemoteError(
            .connectionLost, operation: .move, path: source, destination: destination, remote: displayName,
            detail: "the test stopped the move after its copy")
    }
}

extension BlockingSyncTests {
    // The suites below block their thread on the store (multipart uploads, racing writes, held
    // connections): among the blocking suites, one test at a time.

    /// S3 on the SeaweedFS cluster of scripts/s3-servers.
    @Suite(.serialized) struct S3RemoteTests {
        /// Bytes that are not all alike, so that a part out of place shows.
        func bytes(_ count: Int, seed: UInt64) -> Data {
            var generator = SeededGenerator(seed: seed)
            return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }

        /// The multipart uploads under the remote's prefix that are not finished.
        func pendingUploads(_ remote: S3Remote) throws -> [String] {
            let answer = try remote.send(
                remote.request("GET", key: nil, query: [("uploads", ""), ("prefix", remote.keyPrefix)]),
                .list,
                .root)
            #expect(answer.status == 200)
            return try S3XML(parsing: answer.body).root.children("Upload").compactMap { $0.value("UploadId") }
        }

        func small(_ configuration: inout S3Remote.Configuration) {
            configuration.multipartThreshold = 6 << 20
            configuration.partSize = 5 << 20
            configuration.streamsUnhashedUploads = false
        }

        /// A large source whose hash is not known (what a vault sends) goes up in one
        /// `PutObject` in signed chunks, on its condition; one that gives fewer bytes than it
        /// said writes nothing; a chunk whose signature does not follow is refused.
        @Test func aLargeSourceWithoutItsHashGoesUpInSignedChunks() throws {
            let remote = try S3Servers.remote { $0.multipartThreshold = 6 << 20 }
            let first = bytes(9 << 20 + 321, seed: 3)
            let tag = try #require(
                try remote.write(
                    RemotePath("chunked.bin"), from: UploadSource(first, chunkSize: 300_000),
                    condition: .absent))
            var read = Data()
            #expect(try remote.read(RemotePath("chunked.bin")) { read.append($0) } == tag)
            #expect(read == first)
            #expect(try remote.entry(at: RemotePath("chunked.bin"))?.size == Int64(first.count))
            #expect(try pendingUploads(remote).isEmpty)
            let second = bytes(7 << 20, seed: 4)
            #expect(throws: RemoteError.self) {
                try remote.write(RemotePath("chunked.bin"), from: UploadSource(second), condition: .absent)
            }
            #expect(throws: RemoteError.self) {
                try remote.write(
                    RemotePath("chunked.bin"), from: UploadSource(second),
                    condition: .matches(RemoteTag("\"stale\"")))
            }
            let replaced = try #require(
                try remote.write(
                    RemotePath("chunked.bin"), from: UploadSource(second), condition: .matches(tag)))
            read = Data()
            #expect(try remote.read(RemotePath("chunked.bin")) { read.append($0) } == replaced)
            #expect(read == second)

            // Fewer bytes than said: nothing written.
            var given = false
            let short = UploadSource(size: 8 << 20) {
                defer { given = true }
                return given ? nil : second.prefix(5 << 20)
            }
            let error = #expect(throws: RemoteError.self) {
                try remote.write(RemotePath("short.bin"), from: short, condition: .absent)
            }
            #expect(error?.kind == .sourceChanged, "\(String(describing: error))")
            #expect(try remote.entry(at: RemotePath("short.bin")) == nil)

            // A body whose chunks are not signed in the chain of the request's signature.
            let forged = remote.request(
                "PUT", key: remote.keyPrefix + "forged.bin",
                headers: [
                    "Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": String(1 << 20),
                ],
                payloadHash: S3Signer.streamingPayload)
            let body = S3Signer.chunkedBody(
                of: UploadSource(bytes(1 << 20, seed: 5)), chunkSize: 256 << 10,
                signer: S3Signer.ChunkSigner(
                    remote.signer, stamp: forged.value(forHTTPHeaderField: "x-amz-date") ?? "",
                    seed: String(repeating: "0", count: 64)))
            let answer = try remote.send(
                forged, body: .stream(UploadStream(body), size: body.size), .write, RemotePath("forged.bin"))
            #expect(!(200...299).contains(answer.status), "a forged chunk was taken: \(answer.status)")
            #expect(try remote.entry(at: RemotePath("forged.bin")) == nil)
        }

        @Test func aLargeFileGoesUpInPartsOnItsConditionAndComesBackWhole() throws {
            let remote = try S3Servers.remote(configure: small)
            let first = bytes(12 << 20 + 123, seed: 1)
            let tag = try #require(
                try remote.write(
                    RemotePath("big.bin"), from: UploadSource(first, chunkSize: 300_000), condition: .absent))
            var read = Data()
            #expect(try remote.read(RemotePath("big.bin")) { read.append($0) } == tag)
            #expect(read == first)
            #expect(try remote.entry(at: RemotePath("big.bin"))?.size == Int64(first.count))
            // Create-only and replace-if-unchanged hold on CompleteMultipartUpload too.
            let second = bytes(7 << 20, seed: 2)
            #expect(throws: RemoteError.self) {
                try remote.write(RemotePath("big.bin"), from: UploadSource(second), condition: .absent)
            }
            #expect(throws: RemoteError.self) {
                try remote.write(
                    RemotePath("big.bin"), from: UploadSource(second),
                    condition: .matches(RemoteTag("\"stale\""))
                )
            }
            let replaced = try #require(
                try remote.write(RemotePath("big.bin"), from: UploadSource(second), condition: .matches(tag)))
            #expect(replaced != tag)
            read = Data()
            _ = try remote.read(RemotePath("big.bin")) { read.append($0) }
            #expect(read == second)
            // Every upload was completed or aborted.
            #expect(try pendingUploads(remote).isEmpty)
        }

        /// A source whose SHA-256 the caller gives (sync hashed the file) goes up whole in one
        /// `PutObject` signed with it, on its condition, over a tombstone too. (SeaweedFS does
        /// not check the signed hash against the bytes, as AWS does: nothing here can show a
        /// refusal of bytes that changed since they were hashed.)
        @Test func aLargeSourceWithItsHashGoesUpInOneRequest() throws {
            let remote = try S3Servers.remote(configure: small)
            func hashed(_ data: Data) -> UploadSource {
                var source = UploadSource(data, chunkSize: 300_000)
                source.sha256 = ContentHash(of: data).hex
                return source
            }
            let first = bytes(7 << 20 + 5, seed: 7)
            let tag = try #require(
                try remote.write(RemotePath("one.bin"), from: hashed(first), condition: .absent))
            var read = Data()
            #expect(try remote.read(RemotePath("one.bin")) { read.append($0) } == tag)
            #expect(read == first)
            // One request, so no multipart upload was begun.
            #expect(try pendingUploads(remote).isEmpty)
            #expect(throws: RemoteError.self) {
                try remote.write(RemotePath("one.bin"), from: hashed(first), condition: .absent)
            }
            let second = bytes(7 << 20, seed: 8)
            #expect(throws: RemoteError.self) {
                try remote.write(
                    RemotePath("one.bin"), from: hashed(second), condition: .matches(RemoteTag("\"stale\"")))
            }
            let replaced = try #require(
                try remote.write(RemotePath("one.bin"), from: hashed(second), condition: .matches(tag)))
            #expect(replaced != tag)
            read = Data()
            _ = try remote.read(RemotePath("one.bin")) { read.append($0) }
            #expect(read == second)
            // A new file where a deleted one left a tombstone (a store without conditional deletes).
            try remote.delete(RemotePath("one.bin"), condition: .matches(replaced))
            _ = try #require(try remote.write(RemotePath("one.bin"), from: hashed(first), condition: .absent))
        }

        @Test func aRefusedOrLyingMultipartUploadIsAbortedAndAppliesNothing() throws {
            let remote = try S3Servers.remote(configure: small)
            let original = bytes(100, seed: 3)
            let tag = try #require(
                try remote.write(RemotePath("a.bin"), from: UploadSource(original), condition: .absent))
            let large = bytes(11 << 20, seed: 4)
            do {
                try remote.write(
                    RemotePath("a.bin"), from: UploadSource(large),
                    condition: .matches(RemoteTag("\"other\"")))
                Issue.record("a stale tag was taken")
            } catch let error as RemoteError {
                #expect(error.kind == .preconditionFailed)
            }
            // A file that grew while it was read: the parts sent are dropped.
            let grown = UploadSource(size: Int64(large.count) - 10, nextChunk: UploadSource(large).nextChunk)
            do {
                try remote.write(RemotePath("a.bin"), from: grown, condition: .matches(tag))
                Issue.record("a source that gave more than its size was taken")
            } catch let error as RemoteError {
                #expect(error.kind == .sourceChanged)
            }
            var read = Data()
            #expect(try remote.read(RemotePath("a.bin")) { read.append($0) } == tag)
            #expect(read == original)
            #expect(try pendingUploads(remote).isEmpty)
        }

        @Test func anUploadACrashLeftIsAbortedOnceStaleAndAFreshOneIsNot() throws {
            let prefix = S3Servers.freshPrefix(#function)
            let remote = try S3Remote(try S3Servers.configuration(prefix: prefix))
            let begun = try remote.send(
                remote.request("POST", key: remote.key(RemotePath("left.bin")), query: [("uploads", "")]),
                .write,
                .root)
            #expect(begun.status == 200)
            // Another remote of the prefix sweeps at its first listing: a day old is stale, and
            // this upload is seconds old.
            _ = try S3Remote(try S3Servers.configuration(prefix: prefix)).list(.root)
            #expect(try pendingUploads(remote).count == 1)
            var configuration = try S3Servers.configuration(prefix: prefix)
            configuration.staleUploadAge = -60
            _ = try S3Remote(configuration).list(.root)
            #expect(try pendingUploads(remote).isEmpty)
        }

        @Test func aMoveACrashStoppedBetweenCopyAndDeleteIsFinishedWithoutDeletingNewerWrites() throws {
            let remote = try S3Servers.remote()
            // The copy was made, the delete was not: both paths hold the bytes.
            let tag = try #require(
                try remote.write(RemotePath("a.txt"), from: UploadSource(Data("a".utf8)), condition: .absent))
            try remote.write(RemotePath("b.txt"), from: UploadSource(Data("a".utf8)), condition: .absent)
            try remote.finishMove(RemotePath("a.txt"), to: RemotePath("b.txt"), condition: .matches(tag))
            #expect(try remote.entry(at: RemotePath("a.txt")) == nil)
            // Written again at the source by another device since: it stays.
            let c = try #require(
                try remote.write(RemotePath("c.txt"), from: UploadSource(Data("c".utf8)), condition: .absent))
            try remote.write(RemotePath("d.txt"), from: UploadSource(Data("c".utf8)), condition: .absent)
            try remote.write(
                RemotePath("c.txt"), from: UploadSource(Data("newer".utf8)), condition: .matches(c))
            try remote.finishMove(RemotePath("c.txt"), to: RemotePath("d.txt"), condition: .matches(c))
            #expect(try remote.entry(at: RemotePath("c.txt")) != nil)

            // A folder moved halfway: one key copied, one not, one written again at the source.
            try remote.makeFolder(RemotePath("f"))
            for name in ["1", "2", "3"] {
                try remote.write(
                    RemotePath("f/\(name)"), from: UploadSource(Data(name.utf8)), condition: .absent)
            }
            try remote.makeFolder(RemotePath("g"))
            try remote.write(RemotePath("g/1"), from: UploadSource(Data("1".utf8)), condition: .absent)
            try remote.write(RemotePath("g/3"), from: UploadSource(Data("other".utf8)), condition: .absent)
            try remote.finishMove(RemotePath("f"), to: RemotePath("g"), condition: nil)
            #expect(try remote.list(RemotePath("g")).entries.map(\.name) == ["1", "2", "3"])
            // f/3 differs from g/3: it stays, and so does its folder.
            #expect(try remote.list(RemotePath("f")).entries.map(\.name) == ["3"])
            var data = Data()
            _ = try remote.read(RemotePath("f/3")) { data.append($0) }
            #expect(data == Data("3".utf8))
        }

        @Test func aFolderMadeByKeysAloneStaysWhenItsLastFileGoes() throws {
            let remote = try S3Servers.remote()
            // Another tool wrote "notes/plan.txt" without a marker for "notes".
            let put = try remote.send(
                remote.request(
                    "PUT", key: remote.key(RemotePath("notes/plan.txt")),
                    payloadHash: S3Signer.sha256Hex(Data("x".utf8))),
                body: .data(Data("x".utf8)), .write, .root)
            #expect(put.status == 200)
            let entry = try #require(try remote.entry(at: RemotePath("notes/plan.txt")))
            #expect(try remote.entry(at: RemotePath("notes"))?.kind == .folder)
            try remote.delete(RemotePath("notes/plan.txt"), condition: .matches(try #require(entry.tag)))
            #expect(try remote.entry(at: RemotePath("notes"))?.kind == .folder)
            #expect(try remote.list(RemotePath("notes")).entries.isEmpty)
        }

        @Test func oneListingGivesTheWholeTreeAcrossPages() throws {
            let remote = try S3Servers.remote()
            try remote.makeFolder(RemotePath("a"))
            try remote.makeFolder(RemotePath("a/b"))
            try remote.makeFolder(RemotePath(".documentsync"))
            try remote.write(RemotePath(".documentsync/x"), from: UploadSource(Data()), condition: .absent)
            for index in 0..<25 {
                try remote.write(
                    RemotePath("a/b/\(index).txt"), from: UploadSource(Data("\(index)".utf8)),
                    condition: .absent)
            }
            var pages = 0
            try remote.listPages(prefix: remote.keyPrefix, delimiter: false, maxKeys: 10, .list, .root) { _ in
                pages += 1
            }
            #expect(pages >= 3)
            let tree = try #require(try remote.listTree())
            #expect(tree.count == 27)
            #expect(tree[RemotePath("a/b")]?.kind == .folder)
            #expect(tree[RemotePath("a/b/7.txt")]?.size == 1)
            #expect(tree.keys.allSatisfy { !$0.isMetadata })
        }

        // MARK: Bad input

        func error(_ body: () throws -> Void) -> RemoteError? {
            do {
                try body()
                return nil
            } catch let error as RemoteError {
                return error
            } catch {
                Issue.record("not a RemoteError: \(error)")
                return nil
            }
        }

        /// `curl URL`: the HTTP status and the bytes, with no credentials of ours.
        func curl(_ url: URL) throws -> (status: Int, body: Data) {
            let folder = try TemporaryFolder("share-link")
            let file = folder.url.appendingPathComponent("body")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["curl", "-s", "-o", file.path, "-w", "%{http_code}", url.absoluteString]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let status = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (Int(status) ?? 0, (try? Data(contentsOf: file)) ?? Data())
        }

        /// A share link (`FileManager.url(forPublishingUbiquitousItemAt:expiration:)`): a
        /// presigned GET that curl downloads the object with, with no credentials, until it
        /// expires; then the store refuses it. The URL holds no secret.
        @Test func aShareLinkDownloadsTheFileUntilItExpires() throws {
            let remote = try S3Servers.remote()
            let bytes = Data("the plan, shared\n".utf8)
            try remote.makeFolder(RemotePath("Documents"))
            try remote.write(
                RemotePath("Documents/Plan ü.txt"), from: UploadSource(bytes), condition: .absent)
            let link = try remote.publishedLink(of: RemotePath("Documents/Plan ü.txt"), lifetime: .seconds(3))
            let expires = try #require(link.expires)
            #expect(abs(expires.timeIntervalSinceNow - 3) < 1)
            let secret = remote.configuration.credentials.secretAccessKey
            #expect(!link.url.absoluteString.contains(secret))
            #expect(link.url.absoluteString.contains("X-Amz-Expires=3&"))
            let fetched = try curl(link.url)
            #expect(fetched.status == 200)
            #expect(fetched.body == bytes)
            // Past its expiration (SigV4 counts whole seconds from the signing time).
            Thread.sleep(until: expires.addingTimeInterval(1.5))
            let late = try curl(link.url)
            #expect(late.status == 403, "\(String(decoding: late.body, as: UTF8.self))")
            #expect(late.body != bytes)
            // Only a file the store holds has a link.
            #expect {
                try remote.publishedLink(of: RemotePath("Documents/missing.txt"), lifetime: .seconds(60))
            } throws: { ($0 as? RemoteError)?.kind == .notFound }
            #expect {
                try remote.publishedLink(of: RemotePath("Documents"), lifetime: .seconds(60))
            } throws: { ($0 as? RemoteError)?.kind == .notAFile }
        }

        @Test func aWrongSecretIsRefusedNamingWhereTheKeyCameFromNeverTheKeyOrTheSecret() throws {
            var configuration = try S3Servers.configuration(prefix: S3Servers.freshPrefix(#function))
            configuration.credentials.secretAccessKey = "wrong-secret-123"
            configuration.credentials.source = "the [test] profile"
            let failure = try #require(error { _ = try S3Remote(configuration).list(.root) })
            #expect(failure.kind == .permissionDenied)
            #expect(
                failure.description.contains("secret key does not match the access key of the [test] profile")
            )
            #expect(!failure.description.contains(configuration.credentials.accessKeyID))
            #expect(!failure.description.contains("wrong-secret-123"))
            configuration.credentials.accessKeyID = "AKIANOSUCHKEY"
            let unknown = try #require(error { _ = try S3Remote(configuration).list(.root) })
            #expect(unknown.kind == .permissionDenied)
            #expect(unknown.description.contains("the access key of the [test] profile"))
            #expect(!unknown.description.contains("AKIANOSUCHKEY"))
        }

        @Test func aMissingBucketIsNamed() throws {
            var configuration = try S3Servers.configuration(prefix: "p")
            configuration.bucket = "no-such-bucket-\(UUID().uuidString.prefix(8).lowercased())"
            let failure = try #require(error { _ = try S3Remote(configuration).list(.root) })
            #expect(failure.kind == .unavailable)
            #expect(failure.description.contains("the bucket “\(configuration.bucket)” does not exist"))
        }

        @Test func aPrefixThatIsAFileIsNamed() throws {
            let parent = try S3Servers.remote()
            try parent.write(RemotePath("file"), from: UploadSource(Data("x".utf8)), condition: .absent)
            let remote = try S3Remote(try S3Servers.configuration(prefix: parent.keyPrefix + "file"))
            let failure = try #require(error { _ = try remote.list(.root) })
            #expect(failure.kind == .notAFolder)
            #expect(failure.description.contains("is a file in the bucket"))
            let tree = try #require(error { _ = try remote.listTree() })
            #expect(tree.kind == .notAFolder)
        }

        @Test func aClockFarOffIsExplained() throws {
            var configuration = try S3Servers.configuration(prefix: S3Servers.freshPrefix(#function))
            configuration.clockOffset = 3 * 3600
            let failure = try #require(error { _ = try S3Remote(configuration).list(.root) })
            #expect(failure.description.contains("clock"))
            #expect(failure.description.contains("180 minutes ahead of the store's"))
        }

        @Test func badConfigurationsAreRefusedBeforeAnythingIsSent() throws {
            let credentials = S3Credentials(accessKeyID: "AKIA", secretAccessKey: "s")
            func refusal(_ configuration: S3Remote.Configuration) -> String {
                do {
                    _ = try S3Remote(configuration)
                    return "accepted"
                } catch {
                    return "\(error)"
                }
            }
            var configuration = S3Remote.Configuration(
                bucket: "b", endpoint: URL(string: "http://store.example.com")!, credentials: credentials)
            #expect(refusal(configuration).contains("plain http"))
            configuration.endpoint = URL(string: "ftp://store.example.com")!
            #expect(refusal(configuration).contains("http:// or https://"))
            configuration.endpoint = nil
            configuration.bucket = "no/slash"
            #expect(refusal(configuration).contains("is not a bucket name"))
            // AWS's own endpoint: virtual-host addressing.
            let aws = try S3Remote(
                S3Remote.Configuration(
                    bucket: "team", prefix: "/Notes/", region: "eu-west-1", credentials: credentials))
            #expect(aws.origin == "https://team.s3.eu-west-1.amazonaws.com")
            #expect(aws.bucketPath == "")
            #expect(aws.keyPrefix == "Notes/")
            #expect(aws.displayName == "s3://team/Notes")
        }

        @Test func aConnectionDroppedMidMultipartIsAClearErrorAndTheNextTryGoesOn() throws {
            var configuration = try S3Servers.configuration(prefix: S3Servers.freshPrefix(#function))
            small(&configuration)
            let proxy = try FaultProxy(target: configuration.endpoint!, rewritesHost: false)
            defer { proxy.stop() }
            configuration.endpoint = proxy.url(for: configuration.endpoint!)
            let remote = try S3Remote(configuration)
            let original = bytes(10, seed: 5)
            let tag = try #require(
                try remote.write(RemotePath("a.bin"), from: UploadSource(original), condition: .absent))
            // Every try of the second part is cut off.
            proxy.inject(.resetBeforeRequest, count: 10) { method, path in
                method == "PUT" && path.contains("partNumber=2")
            }
            let large = bytes(11 << 20, seed: 6)
            let failure = try #require(
                error {
                    try remote.write(RemotePath("a.bin"), from: UploadSource(large), condition: .matches(tag))
                })
            #expect(failure.kind == .connectionLost)
            #expect(failure.description.contains("a.bin"))
            var read = Data()
            #expect(try remote.read(RemotePath("a.bin")) { read.append($0) } == tag)
            #expect(read == original)
            #expect(try pendingUploads(remote).isEmpty)
            // The store is back: the same write goes through.
            proxy.decide = { _, _ in .none }
            let written = try remote.write(
                RemotePath("a.bin"), from: UploadSource(large), condition: .matches(tag))
            #expect(written != nil && written != tag)
        }
    }

    /// The probe and the `s3://` address.
    @Suite(.serialized) struct S3ProbeTests {
        @Test func seaweedFSKeepsEveryConditionSyncNeeds() throws {
            let remote = try S3Servers.remote()
            let probe = try S3Probe.run(on: remote)
            #expect(probe.refusal == nil)
            #expect(probe.conditionalDeletesHold)
            #expect(probe.summary.hasPrefix("safe:"))
            // The probe cleans up after itself.
            #expect(try remote.list(.metadataFolder).entries.isEmpty)
        }

        @Test func aStoreThatIgnoresConditionsIsRefusedNamingWhatFailed() throws {
            var configuration = try S3Servers.configuration(prefix: S3Servers.freshPrefix(#function))
            let proxy = try FaultProxy(target: configuration.endpoint!, rewritesHost: false)
            defer { proxy.stop() }
            proxy.decide = { _, _ in .ignoreConditions }
            configuration.endpoint = proxy.url(for: configuration.endpoint!)
            let probe = try S3Probe.run(on: try S3Remote(configuration))
            #expect(
                !probe.createOnlyHolds && !probe.replaceIfUnchangedHolds && !probe.racingWritesHaveOneWinner)
            #expect(!probe.conditionalDeletesHold)
            let refusal = try #require(probe.refusal)
            #expect(refusal.contains("ignores If-None-Match"))
            #expect(refusal.contains("ignores If-Match"))
            #expect(refusal.contains("racing create-only writes"))
        }

        @Test func syncRefusesSuchAStoreAndTakesAGoodOne() throws {
            let cluster = try S3Servers.Cluster.shared()
            let credentials = try cluster.credentials()
            let environment = [
                "AWS_ACCESS_KEY_ID": credentials.accessKeyID,
                "AWS_SECRET_ACCESS_KEY": credentials.secretAccessKey,
            ]
            let good = S3Address(
                bucket: cluster.bucket, prefix: S3Servers.freshPrefix(#function), endpoint: cluster.endpoint,
                region: cluster.region)
            let state = try TemporaryFolder()
            var options = RemoteOptions()
            options.stateHome = state.url
            let (remote, probe) = try SyncRemotes.probeS3(
                good.url, options: options, environment: environment)
            #expect(probe.refusal == nil)
            #expect(remote.configuration.deletes == .conditional)
            let proxy = try FaultProxy(target: cluster.endpoint, rewritesHost: false)
            defer { proxy.stop() }
            proxy.decide = { _, _ in .ignoreConditions }
            var bad = good
            bad.endpoint = proxy.url(for: cluster.endpoint)
            do {
                _ = try SyncRemotes.s3(bad.url, options: options, environment: environment)
                Issue.record("a store that ignores conditions was taken")
            } catch let error as RemoteSetupError {
                #expect(error.kind == .refused)
                #expect(error.message.contains("cannot be synced with safely"))
                #expect(!error.message.contains(credentials.secretAccessKey))
            }
            // What the probe found is kept, private, without the secret.
            let kept = S3Settings.file(for: good.url, stateHome: state.url)
            let text = try String(contentsOf: kept, encoding: .utf8)
            #expect(text.contains("conditionalDeletesHold") && !text.contains(credentials.secretAccessKey))
            #expect(
                try FileManager.default.attributesOfItem(atPath: kept.path)[.posixPermissions] as? Int
                    == 0o600)
            // No credentials anywhere: said, naming where they were looked for.
            do {
                _ = try SyncRemotes.s3(good.url, options: options, environment: ["HOME": "/nonexistent"])
                Issue.record("no credentials, yet a remote")
            } catch let error as RemoteSetupError {
                #expect(error.kind == .credentials)
                #expect(
                    error.message.contains("AWS_ACCESS_KEY_ID")
                        && error.message.contains("/nonexistent/.aws/credentials"))
            }
        }

        @Test func anAddressIsOneURLWithItsSettingsAndNoSecret() throws {
            let address = S3Address(
                bucket: "team", prefix: "/Notes/2026/",
                endpoint: URL(string: "https://minio.example.com:9000")!,
                region: "eu-west-1", profile: "work", addressing: .path)
            #expect(
                address.url
                    == "s3://team/Notes/2026?endpoint=https://minio.example.com:9000&region=eu-west-1&profile=work&addressing=path"
            )
            #expect(try S3Address(parsing: address.url) == address)
            #expect(try S3Address(parsing: "s3://bucket") == S3Address(bucket: "bucket"))
            func message(_ text: String) -> String {
                do {
                    _ = try S3Address(parsing: text)
                    return "parsed"
                } catch {
                    return "\(error)"
                }
            }
            #expect(message("s3://key:secret@bucket/p").contains("holds credentials"))
            #expect(!message("s3://key:secret@bucket/p").contains("secret@"))
            #expect(message("s3://bucket/p?colour=red").contains("unknown setting “colour”"))
            #expect(message("s3://bucket/p?addressing=sideways").contains("“path” or “virtual”"))
            #expect(message("s3:///p").contains("not an S3 URL"))
        }
    }

    @Suite(.serialized) struct S3MoveRecoveryTests {
        @Test func aRenameStoppedBetweenCopyAndDeleteIsFinishedAndTheOldNameNeverComesBack() throws {
            let folder = try TemporaryFolder()
            let remote = HalfMovingRemote(try S3Servers.remote())
            let a = try SyncDevice("a", remote: remote, in: folder)
            let b = try SyncDevice("b", remote: remote, in: folder)
            try Data("the plan\n".utf8).write(to: a.url("plan.txt"))
            #expect(try a.sync().uploaded == 1)
            #expect(try b.sync().downloaded == 1)
            try FileManager.default.moveItem(at: a.url("plan.txt"), to: a.url("renamed.txt"))
            _ = try a.sync()
            // Stopped: both names on the store.
            #expect(try remote.base.entry(at: RemotePath("plan.txt")) != nil)
            #expect(try remote.base.entry(at: RemotePath("renamed.txt")) != nil)
            // The next pass finishes the move.
            _ = try a.sync()
            #expect(try remote.base.entry(at: RemotePath("plan.txt")) == nil)
            _ = try b.sync()
            _ = try a.sync()
            for device in [a, b] {
                #expect(
                    !FileManager.default.fileExists(atPath: device.url("plan.txt").path), "\(device.name)")
                #expect(try String(contentsOf: device.url("renamed.txt"), encoding: .utf8) == "the plan\n")
            }
        }
    }
}
