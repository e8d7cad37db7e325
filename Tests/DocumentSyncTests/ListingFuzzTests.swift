import Foundation
import Synchronization
import Testing

@testable import DocumentSync

#if canImport(FoundationXML)
    import FoundationXML
#endif

extension BlockingSyncTests {
    /// The listing parsers fuzzed: a seed makes a WebDAV multistatus or an S3 `ListObjectsV2`
    /// page of honest and hostile names, then mutates it (cut short, a response or object
    /// twice, a closing tag gone, a byte changed, a status changed), and a ``HostileServer``
    /// serves it to a real remote over loopback. Whatever the document, the listing either fails
    /// with a ``RemoteError``, or every name it gives can be a name here (one component, none of
    /// "", ".", "..", none holding "/", NUL or a control character, in NFC, not one of sync's
    /// own) and the document passed an independent whole-document check (libxml2's tree parser,
    /// through `XMLDocument`). A crash is a failure too.
    ///
    /// The environment chooses the seeds: `LISTING_FUZZ_SEEDS=N` runs N of them (1,000 by
    /// default: a few seconds; scripts/sync-soak runs a hundred times more), from `LISTING_FUZZ_FIRST_SEED` (0 by default);
    /// `LISTING_FUZZ_SEED=S` runs seed S alone and prints its document.
    @Suite struct ListingFuzzTests {
        static var seeds: [UInt64] {
            let environment = ProcessInfo.processInfo.environment
            if let seed = environment["LISTING_FUZZ_SEED"].flatMap(UInt64.init) { return [seed] }
            let count = environment["LISTING_FUZZ_SEEDS"].flatMap(UInt64.init) ?? 1000
            let first = environment["LISTING_FUZZ_FIRST_SEED"].flatMap(UInt64.init) ?? 0
            return Array(first..<first + count)
        }

        static var printsDocuments: Bool { ProcessInfo.processInfo.environment["LISTING_FUZZ_SEED"] != nil }

        @Test func webDAVListingsAreWholeOrFail() throws {
            let document = Mutex(Data())
            let server = try HostileServer { request in
                request.method == "PROPFIND" ? Self.answer(207, document.withLock { $0 }) : .notFound
            }
            defer { server.stop() }
            var configuration = WebDAVRemote.Configuration(
                url: server.url("/dav/C/"), writeProtocol: .conditional)
            configuration.timeout = 5
            let remote = try WebDAVRemote(configuration)
            fuzz(document) { random in
                Self.mutated(Self.multistatus(&random, port: server.port), &random)
            } listing: { _ in
                try remote.list(.root).entries.map(\.name)
            }
        }

        @Test func s3ListingsAreWholeOrFail() throws {
            let document = Mutex(Data())
            let server = try HostileServer { request in
                request.method == "GET" && request.query["list-type"] != nil
                    ? Self.answer(200, document.withLock { $0 }) : .notFound
            }
            defer { server.stop() }
            var configuration = S3Remote.Configuration(
                bucket: "b", endpoint: server.url("/"),
                credentials: S3Credentials(accessKeyID: "AKIAFUZZ", secretAccessKey: "fuzz"))
            configuration.timeout = 5
            let remote = try S3Remote(configuration)
            fuzz(document) { random in
                Self.mutated(Self.listBucketResult(&random), &random)
            } listing: { random in
                // The whole tree (what sync lists an S3 remote with), or one folder.
                Bool.random(using: &random)
                    ? try (remote.listTree() ?? [:]).keys.flatMap(\.components)
                    : try remote.list(.root).entries.map(\.name)
            }
        }

        static func answer(_ status: Int, _ body: Data) -> HostileServer.Answer {
            HostileServer.Answer(status: status, headers: ["Content-Type": "application/xml"], body: body)
        }

        /// For each seed: the document `make` gives is served, and `listing` lists it (giving
        /// every name of the listing); a listing that fails must fail with a ``RemoteError``,
        /// one that does not is checked.
        private func fuzz(
            _ document: borrowing Mutex<Data>, _ make: (inout SeededGenerator) -> Data,
            listing: (inout SeededGenerator) throws -> [String]
        ) {
            var failed = 0
            for seed in Self.seeds {
                var random = SeededGenerator(seed: seed)
                let text = make(&random)
                document.withLock { $0 = text }
                if Self.printsDocuments { print("seed \(seed):\n\(String(decoding: text, as: UTF8.self))") }
                do {
                    check(try listing(&random), whole: text, seed: seed)
                } catch is RemoteError {
                    failed += 1
                } catch {
                    Issue.record("seed \(seed): not a RemoteError: \(error)")
                }
            }
            // The generator makes both kinds: a run where every listing failed checks nothing.
            if Self.seeds.count >= 100 {
                #expect(failed > 0 && failed < Self.seeds.count, "\(failed) failed")
            }
        }

        /// What a listing that did not fail must be: names that can be names here, from a whole
        /// document.
        private func check(_ names: [String], whole text: Data, seed: UInt64) {
            for name in names {
                let problem = RemotePath.problem(withName: name)
                #expect(
                    problem == nil,
                    "seed \(seed): the listing gives \(RemotePath.shown(name)), which \(problem ?? "")")
                #expect(
                    name.precomposedStringWithCanonicalMapping.utf8.elementsEqual(name.utf8),
                    "seed \(seed): \(RemotePath.shown(name)) is not in NFC")
                #expect(
                    !RemotePath.isReserved(name), "seed \(seed): \(RemotePath.shown(name)) is one of ours")
            }
            let document = try? XMLDocument(data: text, options: [])
            #expect(
                document != nil,
                "seed \(seed): a listing from a document that is not whole:\n\(String(decoding: text, as: UTF8.self))"
            )
        }

        // MARK: - Documents

        /// Names that are not names, or not documents, as an href's last segment spells them
        /// (percent-encoded).
        static let hostileSegments = [
            "x%2F..%2F..%2Fevil.txt", "%2e%2e", "%2E", "..", ".", "evil%00.txt", "evil%1B%5B2J", "evil%C2%9B",
            ".documentsync-1.download", ".documentsync-tmp-0-1", "a%2Fb", "%FF%FE", "%", "", "%0A",
            "cafe%CC%81.txt",
        ]

        /// Keys that are not names, or not documents, as a page with `encoding-type=url` spells
        /// them.
        static let hostileKeys = [
            "a/../../evil.txt", "a//b.txt", "evil%00.txt", "evil%1B%5B2J", "..", "./x",
            ".documentsync-1.download",
            "%FF", "%", "/lead.txt", "trail//", "%0D%0A", "cafe%CC%81.txt", "n0.txt",
        ]

        static func pick<T>(_ values: [T], _ random: inout SeededGenerator) -> T {
            values[Int.random(in: 0..<values.count, using: &random)]
        }

        /// Whether a one-in-`odds` chance came up.
        static func chance(_ odds: Int, _ random: inout SeededGenerator) -> Bool {
            Int.random(in: 0..<odds, using: &random) == 0
        }

        static func multistatus(_ random: inout SeededGenerator, port: Int) -> String {
            var items = [HostileServer.Item("/dav/C/")]
            for index in 0..<Int.random(in: 0...8, using: &random) {
                // Mostly honest names, each its own; now and then one that is not a name, or
                // random bytes.
                var segment = "n\(index)" + pick([".txt", "", "%20x", "%C3%A9", "-caf%C3%A9"], &random)
                if chance(6, &random) { segment = pick(hostileSegments, &random) }
                if chance(30, &random) {
                    segment = (0..<Int.random(in: 1...6, using: &random)).map { _ in
                        String(format: "%%%02X", Int.random(in: 0...255, using: &random))
                    }.joined()
                }
                var base = "/dav/C/"
                if chance(10, &random) {
                    base = pick(
                        ["http://127.0.0.1:\(port)/dav/C/", "/dav/C/A/", "/elsewhere/", "/dav/C//"], &random)
                }
                let href = base + segment
                let etag = "e\(Int.random(in: 0..<4, using: &random))"
                items.append(
                    Bool.random(using: &random)
                        ? HostileServer.Item(href + "/")
                        : HostileServer.Item(href, etag: etag, size: Int.random(in: 0..<99, using: &random)))
            }
            if chance(20, &random) { items.removeFirst() }
            return HostileServer.multistatus(items)
        }

        static func listBucketResult(_ random: inout SeededGenerator) -> String {
            var objects: [HostileServer.Object] = []
            for index in 0..<Int.random(in: 0...8, using: &random) {
                var key =
                    pick(["", "A/", "A/B/", "caf%C3%A9/"], &random) + "n\(index)"
                    + pick([".txt", "", "/"], &random)
                if chance(6, &random) { key = pick(hostileKeys, &random) }
                objects.append(
                    HostileServer.Object(
                        key, etag: "e\(Int.random(in: 0..<4, using: &random))",
                        size: Int.random(in: 0..<99, using: &random)))
            }
            let prefixes = (0..<Int.random(in: 0...2, using: &random)).map { _ in
                chance(4, &random) ? pick(["../", "/", "%00/", "x"], &random) : pick(["A/", "B/"], &random)
            }
            let truncated = chance(6, &random)
            return HostileServer.listBucketResult(
                objects, prefixes: prefixes, truncated: truncated,
                token: truncated && Bool.random(using: &random) ? "t" : nil, encoded: !chance(5, &random))
        }

        /// `text` as it is (half the time), or with one to three mutations: cut, an element twice,
        /// a closing tag gone, a byte changed, a status that is not 200, an element dropped.
        static func mutated(_ text: String, _ random: inout SeededGenerator) -> Data {
            var bytes = Array(text.utf8)
            for _ in 0..<(chance(2, &random) ? 0 : Int.random(in: 1...3, using: &random)) {
                switch Int.random(in: 0..<6, using: &random) {
                case 0:
                    bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
                case 1:
                    if let range = element(in: bytes, &random) {
                        bytes.insert(contentsOf: bytes[range], at: range.upperBound)
                    }
                case 2:
                    let closings = bytes.indices.filter {
                        bytes[$0] == UInt8(ascii: "<") && $0 + 1 < bytes.count
                            && bytes[$0 + 1] == UInt8(ascii: "/")
                    }
                    if let start = closings.randomElement(using: &random),
                        let end = bytes[start...].firstIndex(of: UInt8(ascii: ">"))
                    {
                        bytes.removeSubrange(start...end)
                    }
                case 3:
                    if !bytes.isEmpty {
                        bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(
                            in: 0...255, using: &random)
                    }
                case 4:
                    bytes = Array(
                        String(decoding: bytes, as: UTF8.self).replacingOccurrences(
                            of: "200 OK", with: "404 Not Found"
                        ).utf8)
                default:
                    if let range = element(in: bytes, &random) { bytes.removeSubrange(range) }
                }
            }
            return Data(bytes)
        }

        /// The bytes of one response or object element, chosen at random.
        private static func element(in bytes: [UInt8], _ random: inout SeededGenerator) -> Range<Int>? {
            let text = String(decoding: bytes, as: UTF8.self)
            var ranges: [Range<Int>] = []
            for (open, close) in [("<D:response>", "</D:response>"), ("<Contents>", "</Contents>")] {
                var from = text.startIndex
                while let start = text.range(of: open, range: from..<text.endIndex),
                    let end = text.range(of: close, range: start.upperBound..<text.endIndex)
                {
                    ranges.append(
                        text.utf8.distance(
                            from: text.startIndex, to: start.lowerBound)..<text.utf8.distance(
                                from: text.startIndex, to: end.upperBound))
                    from = end.upperBound
                }
            }
            return ranges.isEmpty ? nil : ranges[Int.random(in: 0..<ranges.count, using: &random)]
        }
    }
}
