import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

extension BlockingSyncTests {
    /// What a hostile or broken server on loopback (``HostileServer``) answers, and what sync
    /// makes of it: a name from a server never leaves the container, an answer that is not a
    /// whole document fails the listing, every request has a deadline, and a listing that
    /// repeats or leaves out items is never read as the truth. Each failure names what failed,
    /// the next pass goes on once the server behaves, and nothing here is changed meanwhile.
    @Suite struct HostileServerTests {
        /// A device whose container is `folder/a/Documents`: a name that climbs two folders out
        /// of it lands in `folder`, which the test watches.
        struct Setup {
            let folder: TemporaryFolder
            let device: SyncDevice

            init(_ remote: any Remote, _ name: String = #function) throws {
                folder = try TemporaryFolder(name)
                device = try SyncDevice("a", remote: remote, in: folder)
            }

            /// Everything under the test's folder outside the device's container, state and
            /// version store: what a name that escaped would have made.
            func strays() throws -> [String] {
                let kept = ["a/Documents", "a/state", "a/Versions", "a/Deleted"]
                var found: [String] = []
                let enumerator = FileManager.default.enumerator(atPath: folder.url.path)
                while let path = enumerator?.nextObject() as? String {
                    if path == "a" || kept.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) {
                        continue
                    }
                    found.append(path)
                }
                return found.sorted()
            }
        }

        /// The error `body` fails with, run on a thread of its own and waited for at most
        /// `seconds` (``bounded(_:_:)``); nil, with an issue recorded, when it does not fail in
        /// time. The server stops then: a call it holds ends.
        private func failing<T: Sendable>(
            within seconds: Double, _ server: HostileServer, _ body: @escaping @Sendable () throws -> T
        ) -> RemoteError? {
            let outcome = bounded(seconds) { Result { try body() } }
            server.stop()
            guard case .failure(let error as RemoteError)? = outcome else {
                Issue.record("it did not fail with a RemoteError: \(String(describing: outcome))")
                return nil
            }
            return error
        }

        /// `body` run on a thread of its own, waited for at most `seconds`: a call that would
        /// hang (before the fix) fails the test instead of the run. Nil when it did not end.
        private func bounded<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () -> T) -> T? {
            let result = Mutex<T?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                let value = body()
                result.withLock { $0 = value }
                done.signal()
            }.start()
            guard done.wait(timeout: .now() + seconds) == .success else {
                Issue.record("did not end within \(seconds) s")
                return nil
            }
            return result.withLock { $0 }
        }

        // MARK: - 1. Names from a server never leave the container

        /// Names that are not names, as each store spells them: WebDAV hrefs whose last segment
        /// decodes to "/" inside one name, "..", ".", NUL, a terminal's escape (C0 and C1); S3
        /// keys with a ".." among their names, an empty one ("a//b"), NUL, an escape.
        static let hostileNames: [(store: String, spelled: String, shown: String)] = [
            ("WebDAV", "/dav/C/x%2F..%2F..%2F..%2Fpwned%2Fevil.txt", "x/../../../pwned/evil.txt"),
            ("WebDAV", "/dav/C/..%2F..%2Fpwned.txt", "../../pwned.txt"),
            ("WebDAV", "/dav/C/%2e%2e/", "“..”"),
            ("WebDAV", "/dav/C/%2E/", "“.”"),
            ("WebDAV", "/dav/C/evil%00.txt", "evil\\u{0}.txt"),
            ("WebDAV", "/dav/C/evil%1B%5B2J.txt", "evil\\u{1B}[2J.txt"),
            ("WebDAV", "/dav/C/evil%C2%9B31m.txt", "evil\\u{9B}31m.txt"),
            ("S3", "x/../../../pwned/evil.txt", "“..”"),
            ("S3", "a//b.txt", "“”"),
            ("S3", "evil\u{0}.txt", "evil\\u{0}.txt"),
            ("S3", "evil\u{1B}[2J.txt", "evil\\u{1B}[2J.txt"),
        ]

        @Test(arguments: hostileNames.indices)
        func aNameThatIsNotOneFailsTheListingAndNothingLeavesTheContainer(_ index: Int) throws {
            let (name, spelled, shown) = Self.hostileNames[index]
            let store = try HostileStores.make(name)
            store.put("kept.txt", "kept\n")
            let setup = try Setup(try store.anyRemote(deadline: RequestDeadline()))
            #expect(try setup.device.sync().downloaded == 1)
            store.listHostile(spelled)
            let message = try #require(passFailure { try setup.device.sync() })
            #expect(message.contains("cannot be a name") && message.contains(shown), "\(message)")
            #expect(message.contains(store.server.url("/").absoluteString), "\(message)")
            let reads = store.server.requests.filter { $0.method == "GET" && $0.query.isEmpty }
            #expect(reads.allSatisfy { $0.path.hasSuffix("/kept.txt") || $0.path.hasSuffix("/later.txt") })
            #expect(try setup.strays() == [])
            #expect(try setup.device.tree() == ["kept.txt": "kept\n"])
            // The server behaves again: the next pass goes on.
            store.rewritingListings { ($0, .whole) }
            store.put("later.txt", "later\n")
            #expect(try setup.device.sync().downloaded == 1)
            #expect(try setup.device.tree() == ["kept.txt": "kept\n", "later.txt": "later\n"])
        }

        @Test func anS3KeyOutsideThePrefixFailsTheListing() throws {
            let s3 = try HostileS3()
            s3.put("C/kept.txt", "kept\n")
            s3.listing { _, objects, prefixes in
                let outside = HostileS3.object("elsewhere/x.txt", Data("evil\n".utf8))
                return .xml(200, HostileServer.listBucketResult(objects + [outside], prefixes: prefixes))
            }
            let error = #expect(throws: RemoteError.self) { try s3.remote(prefix: "C").listTree() }
            #expect(
                error?.description.contains("outside the prefix asked for: “elsewhere/x.txt”") == true,
                "\(String(describing: error))")
        }

        @Test func anS3FolderOutsideThePrefixFailsTheListingAndIsNeverListed() throws {
            let s3 = try HostileS3()
            s3.put("C/kept.txt", "kept\n")
            s3.put("elsewhere/x.txt", "evil\n")
            s3.listing { _, objects, prefixes in
                .xml(200, HostileServer.listBucketResult(objects, prefixes: prefixes + ["elsewhere/"]))
            }
            let error = #expect(throws: RemoteError.self) { try s3.remote(prefix: "C").listTree() }
            #expect(
                error?.description.contains("not one name inside the prefix asked for: “elsewhere/”") == true,
                "\(String(describing: error))")
            #expect(!s3.server.requests.contains { $0.query["prefix"] == "elsewhere/" })
        }

        /// The tree is listed a top-level folder at a time, several at once (the top level first,
        /// its folders as common prefixes): every folder's items are in it, and one folder whose
        /// listing is cut short fails the whole, never a tree without that folder's items.
        @Test func theTreeIsListedSeveralFoldersAtOnceAndOneFailingFailsTheWhole() throws {
            let s3 = try HostileS3()
            for folder in 0..<12 {
                for file in 0..<3 { s3.put("C/f\(folder)/d\(file).txt", "\(folder).\(file)\n") }
            }
            s3.put("C/top.txt", "top\n")
            let inFlight = Locked((now: 0, most: 0))
            s3.listing { request, objects, prefixes in
                if !request.delimiter {
                    inFlight.value.withLock {
                        $0.now += 1
                        $0.most = max($0.most, $0.now)
                    }
                    Thread.sleep(forTimeInterval: 0.2)
                    inFlight.value.withLock { $0.now -= 1 }
                }
                return .xml(200, HostileServer.listBucketResult(objects, prefixes: prefixes))
            }
            let tree = try #require(try s3.remote(prefix: "C").listTree())
            #expect(tree.count == 12 + 12 * 3 + 1)
            #expect(
                tree[RemotePath("f7/d2.txt")]
                    == RemoteEntry(
                        name: "d2.txt", kind: .file, size: 4,
                        tag: S3Remote.tag(S3Remote.md5Hex(Data("7.2\n".utf8)))))
            #expect(tree[RemotePath("f11")]?.kind == .folder)
            let most = inFlight.value.withLock { $0.most }
            #expect(most > 1 && most <= S3Remote.listingsAtOnce, "\(most) listings at once")

            s3.listing { request, objects, prefixes in
                let whole = HostileServer.listBucketResult(objects, prefixes: prefixes)
                return request.prefix == "C/f5/"
                    ? .xml(200, whole, delivery: .cut(bytes: whole.utf8.count / 2)) : .xml(200, whole)
            }
            let error = #expect(throws: RemoteError.self) { try s3.remote(prefix: "C").listTree() }
            #expect(error?.path.isRoot == true, "\(String(describing: error))")
        }

        @Test(arguments: HostileStores.names)
        func twoSpellingsOfOneNameFailTheListing(_ name: String) throws {
            let store = try HostileStores.make(name)
            store.put("caf\u{E9}.txt", "composed\n")
            store.listHostile(name == "S3" ? "cafe\u{301}.txt" : "/dav/C/cafe%CC%81.txt")
            let remote = try store.anyRemote(deadline: RequestDeadline())
            var errors = [#expect(throws: RemoteError.self) { try remote.list(.root) }]
            // And the whole tree, where the remote lists one.
            if let s3 = remote as? S3Remote {
                errors.append(#expect(throws: RemoteError.self) { try s3.listTree() })
            }
            for error in errors {
                #expect(
                    error?.description.contains("differ only in how their letters are encoded") == true,
                    "\(String(describing: error))")
            }
        }

        /// A pass leaves out of S3's listing the files as the journal last saw them on both
        /// sides (``Remote/listTree(keeping:)``). A folder listed at the path of such a file
        /// still takes its place, as it does in a whole listing: the pass reads the file's row
        /// again and leaves both alone, with a note, never deleting or downloading anything.
        @Test func aFolderListedWhereAFileLeftOutOfTheListingWasTakesItsPlace() throws {
            let s3 = try HostileS3()
            s3.put("x", "a file\n")
            s3.put("kept.txt", "kept\n")
            let setup = try Setup(try s3.remote())
            #expect(try setup.device.sync().downloaded == 2)
            s3.put("x/y.txt", "inside\n")
            let summary = try setup.device.sync()
            #expect(summary.notes.contains("x: a file on one side and a folder on the other; left as it is"))
            #expect(summary.downloaded == 0 && summary.deletedLocally == 0 && summary.deletedRemotely == 0)
            #expect(try setup.device.tree() == ["x": "a file\n", "kept.txt": "kept\n"])
        }

        /// A server that spells a name in NFD (a macOS server): the name is synced in NFC, and
        /// asked for as the server spells it.
        @Test func aNameInAnotherNormalisationIsAskedForAsTheServerSpellsIt() throws {
            let dav = try HostileDAV()
            dav.put("cafe\u{301}.txt", "decomposed\n")
            dav.listing { folder, items in
                .xml(
                    207,
                    HostileServer.multistatus(
                        items.map {
                            $0.etag == nil
                                ? $0
                                : HostileServer.Item("/dav/C/cafe%CC%81.txt", etag: $0.etag, size: $0.size)
                        }))
            }
            let setup = try Setup(try dav.remote())
            #expect(try setup.device.sync().downloaded == 1)
            #expect(try setup.device.tree() == ["caf\u{E9}.txt": "decomposed\n"])
            #expect(dav.server.requests.contains { $0.method == "GET" && $0.path == "/dav/C/cafe%CC%81.txt" })
            let s3 = try HostileS3()
            s3.put("cafe\u{301}.txt", "decomposed\n")
            let device = try SyncDevice("b", remote: try s3.remote(), in: setup.folder)
            #expect(try device.sync().downloaded == 1)
            #expect(s3.server.requests.contains { $0.method == "GET" && $0.path == "/b/cafe%CC%81.txt" })
        }

        @Test func namesSyncKeepsForItselfAreLeftOutOfListings() throws {
            let dav = try HostileDAV()
            dav.put("kept.txt", "kept\n")
            dav.put(".documentsync-0f.download", "not a document\n")
            dav.put(".documentsync-tmp-1-2", "a write in progress\n")
            #expect(try dav.remote().list(.root).entries.map(\.name) == ["kept.txt"])
        }

        @Test func aConflictDescribedAtAPathOutsideTheContainerIsNotTaken() throws {
            let remote = SimulatedRemote()
            let setup = try Setup(remote)
            try setup.device.write("doc.txt", "mine\n")
            try setup.device.sync()
            // Two folders up from the container is the test's folder, where a file waits.
            let outside = setup.folder.file("a/outside.txt")
            try Data("outside\n".utf8).write(to: outside)
            let conflicts = RemotePath.metadataFolder.appending("conflicts")
            try remote.directWrite(
                conflicts.appending("x.json"), Data(#"{"path":"../outside.txt","computer":"evil"}"#.utf8))
            try remote.directWrite(conflicts.appending("x.data"), Data("evil\n".utf8))
            let summary = try setup.device.sync()
            #expect(summary.notes.contains { $0.contains("not a document's path") }, "\(summary.notes)")
            #expect(setup.device.store.unresolvedConflictVersionsOfItem(at: outside).isEmpty)
            let strays = try setup.strays()
            #expect(strays == ["a/outside.txt"], "\(strays)")
        }

        // MARK: - 3. An answer that is not a whole document fails the listing

        /// Where a listing's body is cut: what a server that dies mid-answer sends, with a
        /// length that says it is whole.
        static let cuts: [Double] = [0.1, 0.5, 0.9, 0.99]

        @Test(arguments: HostileStores.names, cuts)
        func aListingCutShortFailsAndDeletesNothing(_ store: String, _ fraction: Double) throws {
            let store = try HostileStores.make(store)
            for index in 0..<12 { store.put(String(format: "n%02d.txt", index), "note \(index)\n") }
            let setup = try Setup(try store.anyRemote(deadline: RequestDeadline()))
            #expect(try setup.device.sync().downloaded == 12)
            store.rewritingListings { whole in
                (String(whole.prefix(Int(Double(whole.count) * fraction))), .whole)
            }
            let message = try #require(passFailure { try setup.device.sync() })
            #expect(message.contains("not well-formed XML"), "\(message)")
            #expect(try setup.device.tree().count == 12)
        }

        /// A page that says it goes on only at its end (where a store may put `IsTruncated`), cut
        /// before: its missing `IsTruncated` must not read as "complete".
        @Test func anS3PageWithoutIsTruncatedIsNotTheLastPage() throws {
            let s3 = try HostileS3()
            s3.put("a.txt", "a\n")
            s3.listing { _, objects, _ in
                let contents = objects.map {
                    "<Contents><Key>\($0.key)</Key><ETag>&quot;\($0.etag)&quot;</ETag><Size>\($0.size)</Size></Contents>"
                }
                return .xml(
                    200,
                    "<ListBucketResult><EncodingType>url</EncodingType>\(contents.joined())</ListBucketResult>"
                )
            }
            let error = #expect(throws: RemoteError.self) { try s3.remote().listTree() }
            #expect(
                error?.description.contains("IsTruncated is missing") == true, "\(String(describing: error))")
        }

        /// An answer whose connection closes before the length its head announced.
        @Test(arguments: HostileStores.names)
        func anAnswerCutOnTheWireFailsTheListing(_ store: String) throws {
            let store = try HostileStores.make(store)
            store.put("a.txt", "a\n")
            store.deliveringListings(.cut(bytes: 100))
            #expect(throws: RemoteError.self) { try store.anyRemote(deadline: RequestDeadline()).list(.root) }
        }

        // MARK: - 4. Every request has a deadline

        /// A second, then 64 bytes a second: what the tests give, small so that they are quick.
        static let shortDeadline = RequestDeadline(allowance: 1, leastRate: 64)

        @Test(arguments: HostileStores.names)
        func aListingAnsweredAByteEveryTwoSecondsFailsWithinTheDeadline(_ store: String) throws {
            let store = try HostileStores.make(store)
            store.put("a.txt", "a\n")
            store.deliveringListings(.trickle(bytes: 1, seconds: 2))
            let remote = try store.anyRemote(deadline: Self.shortDeadline)
            let started = Date()
            let error = failing(within: 30, store.server) { try remote.list(.root) }
            let elapsed = Date().timeIntervalSince(started)
            #expect(error?.kind == .timedOut && error?.operation == .list)
            let message = error?.description ?? ""
            #expect(message.contains("\(store.listingMethod) \(store.server.url("/"))"), "\(message)")
            #expect(message.contains("slower than 64 bytes/s"), "\(message)")
            #expect(elapsed < 5, "\(elapsed) s")
        }

        @Test func aReadAnsweredAByteEveryTwoSecondsFailsWithinTheDeadline() throws {
            let s3 = try HostileS3()
            s3.put("a.txt", "some text\n")
            s3.server.intercept { request in
                request.method == "GET" && request.path == "/b/a.txt"
                    ? .file(Data("some text\n".utf8), etag: "\"x\"", delivery: .trickle(bytes: 1, seconds: 2))
                    : nil
            }
            let remote = try s3.remote(deadline: Self.shortDeadline)
            let started = Date()
            let error = failing(within: 30, s3.server) { try remote.read(RemotePath("a.txt")) { _ in } }
            let elapsed = Date().timeIntervalSince(started)
            #expect(error?.kind == .timedOut && error?.operation == .read)
            let message = error?.description ?? ""
            #expect(message.contains("GET \(s3.server.url("/b/a.txt").absoluteString)"), "\(message)")
            #expect(elapsed < 5, "\(elapsed) s")
        }

        /// The deadline grows with the bytes: an answer that keeps coming at more than the least
        /// rate goes on past the allowance.
        @Test func anAnswerThatKeepsComingOutlastsTheAllowance() throws {
            let dav = try HostileDAV()
            let text = String(repeating: "a line of a long document\n", count: 10_000)
            dav.put("long.txt", text)
            dav.server.intercept { request in
                request.method == "GET"
                    ? .file(
                        Data(text.utf8), etag: "\"long\"", delivery: .trickle(bytes: 32 << 10, seconds: 0.1))
                    : nil
            }
            let remote = try dav.remote(deadline: RequestDeadline(allowance: 0.3, leastRate: 65536))
            let started = Date()
            var received = Data()
            _ = try remote.read(RemotePath("long.txt")) { received.append($0) }
            #expect(received == Data(text.utf8))
            #expect(Date().timeIntervalSince(started) > 0.3)
        }

        @Test func aPassTooSlowToFinishSaysWhyAndTheNextGoesOn() throws {
            let dav = try HostileDAV()
            dav.put("a.txt", "a\n")
            let setup = try Setup(try dav.remote(deadline: Self.shortDeadline))
            dav.listing { _, items in
                .xml(207, HostileServer.multistatus(items), delivery: .trickle(bytes: 1, seconds: 2))
            }
            let device = setup.device
            let outcome = bounded(30) { Result { try device.sync() } }
            guard case .failure(let error)? = outcome else {
                dav.server.stop()
                Issue.record("the pass did not fail: \(String(describing: outcome))")
                return
            }
            let message = "\(error)"
            #expect(message.contains("cannot list") && message.contains("slower than"), "\(message)")
            dav.listing { _, items in .xml(207, HostileServer.multistatus(items)) }
            #expect(try setup.device.sync().downloaded == 1)
        }

        @Test func aRepeatedContinuationTokenFailsTheListing() throws {
            let s3 = try HostileS3()
            s3.put("a.txt", "a\n")
            s3.put("b.txt", "b\n")
            s3.listing { _, objects, prefixes in
                .xml(
                    200,
                    HostileServer.listBucketResult(
                        objects, prefixes: prefixes, truncated: true, token: "again"))
            }
            let remote = try s3.remote()
            let error = failing(within: 20, s3.server) { try remote.listTree() }
            #expect(
                error?.description.contains("“again” a second time") == true, "\(String(describing: error))")
            #expect(s3.server.requests.count { $0.query["list-type"] != nil } == 2)
        }

        @Test func pagesThatBringNothingNewFailTheListing() throws {
            let s3 = try HostileS3()
            s3.put("a.txt", "a\n")
            let pages = Mutex(0)
            s3.listing { _, objects, prefixes in
                let page = pages.withLock {
                    $0 += 1
                    return $0
                }
                return .xml(
                    200,
                    HostileServer.listBucketResult(
                        objects, prefixes: prefixes, truncated: true, token: "t\(page)"))
            }
            let remote = try s3.remote()
            let error = failing(within: 20, s3.server) { try remote.list(.root) }
            #expect(error?.description.contains("hold nothing new") == true, "\(String(describing: error))")
        }

        // MARK: - 13. Duplicates, lying listings, and whose key was refused

        @Test func hrefsListedTwiceDoNotDownloadAgain() throws {
            let dav = try HostileDAV()
            for folder in ["A", "B", "C", "D", "E"] {
                for index in 0..<8 { dav.put("\(folder)/n\(index).txt", "\(folder) \(index)\n") }
            }
            let setup = try Setup(try dav.remote())
            #expect(try setup.device.sync().downloaded == 40)
            dav.listing { _, items in
                .xml(207, HostileServer.multistatus(items + items.dropFirst().prefix(5)))
            }
            let summary = try setup.device.sync()
            #expect(summary.downloaded == 0 && !summary.didWork, "\(summary)")
            #expect(try setup.device.tree().count == 40)
            // Listed twice and differently: which one is it?
            dav.listing { _, items in
                var twice = items
                if let file = items.first(where: { $0.etag != nil }) {
                    twice.append(HostileServer.Item(file.href, etag: "other", size: file.size))
                }
                return .xml(207, HostileServer.multistatus(twice))
            }
            let message = try #require(passFailure { try setup.device.sync() })
            #expect(message.contains("twice, and differently"), "\(message)")
        }

        @Test func aListingThatLeavesFilesOutSaysWhySyncStopped() throws {
            let dav = try HostileDAV()
            for index in 0..<40 { dav.put(String(format: "n%02d.txt", index), "note \(index)\n") }
            let setup = try Setup(try dav.remote())
            #expect(try setup.device.sync().downloaded == 40)
            // Four in ten left out of every listing, still there when asked for alone.
            dav.listing { _, items in
                .xml(
                    207,
                    HostileServer.multistatus(items.enumerated().filter { $0.offset % 5 < 3 }.map(\.element)))
            }
            let summary = try setup.device.sync()
            #expect(summary.description != "nothing to do", "\(summary)")
            #expect(summary.description.contains("left for the next sync"), "\(summary)")
            let note = try #require(
                summary.notes.first { $0.hasPrefix("sync stopped after") }, "\(summary.notes)")
            #expect(note.contains("its listings may leave items out"), "\(note)")
            #expect(try setup.device.tree().count == 40)
        }

        @Test func aRefusedKeyIsNamedByWhereItCameFromNeverByItsId() throws {
            let s3 = try HostileS3()
            s3.server.intercept { _ in
                .xml(
                    403,
                    "<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message></Error>"
                )
            }
            let remote = try s3.remote(source: "the [work] profile in /home/ana/.aws/credentials")
            let error = #expect(throws: RemoteError.self) { try remote.list(.root) }
            let message = error?.description ?? ""
            #expect(message.contains("the [work] profile in /home/ana/.aws/credentials"), "\(message)")
            #expect(!message.contains("AKIAHOSTILETEST") && !message.contains("hostile-secret"), "\(message)")
        }
    }
}
