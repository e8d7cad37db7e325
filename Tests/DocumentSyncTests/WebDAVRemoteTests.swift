import DocumentKit
import Foundation
import Synchronization
import Testing

@testable import DocumentSync

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension BlockingSyncTests {
    /// The WebDAV remote on real servers (Apache, and wsgidav and SabreDAV where they differ):
    /// the probe's classes, locks held by others, two devices syncing, credentials and what is
    /// kept of them.
    @Suite struct WebDAVRemoteTests {
        @Test(arguments: WebDAVServers.Server.allCases)
        func theProbeClassifiesEachServer(_ server: WebDAVServers.Server) throws {
            let remote = try WebDAVServers.collection(on: server).remote
            let probe = try WebDAVProbe.run(on: remote)
            #expect(probe.hasETags && probe.honoursIfNoneMatch)
            #expect(!probe.folderETagsPropagate)
            switch server {
            case .wsgidav, .wsgidavNS:
                // Stock ETags of inode, whole-second time and size: the same for two writes of
                // one size within a second, whatever the luck of the probe's timing.
                #expect(probe.etagsChangeWithinASecond == (server == .wsgidavNS) && !probe.etagsAreDigests)
                #expect(
                    probe.refusal?.contains("same across two writes of the same size") == (server == .wsgidav)
                )
                // If-Match on a file that is not there makes it.
                #expect(!probe.honoursIfMatch)
                #expect(probe.refusal?.contains("on a file that is not there") == true)
                #expect(probe.locksAreReal && !probe.lockConditionsHold)
                #expect(probe.writeProtocol == nil)
                #expect(probe.etagRecipe == nil)
                #expect(probe.server?.hasPrefix("WsgiDAV") == true)
            case .sabre, .sabreLocks:
                // ETags made of the bytes (an MD5), strong; Nextcloud's fake locks, or real ones.
                #expect(probe.honoursIfMatch)
                #expect(probe.etagsAreDigests && !probe.etagsWeakAfterWrite)
                #expect(probe.locksAreReal == (server == .sabreLocks))
                #expect(probe.etagRecipe == .md5Hex)
                #expect(probe.writeProtocol == (server == .sabreLocks ? .locking : .conditional))
            default:
                #expect(probe.honoursIfMatch)
                #expect(probe.writeProtocol == .locking)
                #expect(probe.locksAreReal && probe.lockConditionsHold)
                #expect(probe.server?.hasPrefix("Apache") == true)
                // Digest: made of the bytes and never weak; the others weak for a second after a write.
                #expect(probe.etagsAreDigests == (server == .digest))
                #expect(probe.etagRecipe == (server == .digest ? .sha1Base64 : nil))
                #expect(probe.etagsWeakAfterWrite == (server != .digest))
            }
            // The scratch folder is gone.
            #expect(try remote.list(.root).entries.isEmpty)
        }

        /// The first contact with a server whose answer is lost (a connection reset before or
        /// after the server saw the request, an answer cut short), anywhere in the probe: a
        /// failure of this pass that the next one tries again, never a server that "cannot be
        /// used", nor one classed by what the broken request seemed to say. Where libcurl sent
        /// the request again by itself, the probe goes on and finds what the server is.
        @Test(arguments: [
            // The probe's scratch folder: its answer cut; the MKCOL done, then sent again by
            // libcurl (405, as the folder is there).
            ("MKCOL", FaultProxy.Fault.cutResponseBody, 1, true), ("MKCOL", .resetAfterRequest, 1, false),
            // The answer of its first PUT; its lock with the right tag (which shows that locks
            // hold); every PROPFIND (they are sent again).
            ("PUT", .cutResponseBody, 1, true), ("LOCK", .resetAfterRequest, 2, true),
            ("PROPFIND", .resetBeforeRequest, 0, true),
        ])
        func aFirstContactWhoseAnswerIsLostIsAFailureToRetry(
            method: String, fault: FaultProxy.Fault, nth: Int, failsThisPass: Bool
        ) throws {
            let collection = try WebDAVServers.collection(on: .default)
            let proxy = try FaultProxy(target: collection.url)
            let seen = Mutex(0)
            proxy.decide = { sent, _ in
                guard sent == method else { return .none }
                let count = seen.withLock {
                    $0 += 1
                    return $0
                }
                return nth == 0 || count == nth ? fault : .none
            }
            let url = proxy.url(for: collection.url).absoluteString
            let state = try TemporaryFolder()
            var options = try WebDAVServers.options(keepingSettingsIn: state)
            options.timeout = 2
            if failsThisPass {
                let failed = #expect(throws: RemoteSetupError.self) {
                    _ = try SyncRemotes.remote(for: url, options: options)
                }
                #expect(
                    failed?.kind == .unreachable && failed?.isTransient == true, "\(failed?.message ?? "")")
                #expect(failed?.message.contains("tries again") == true, "\(failed?.message ?? "")")
                // Nothing kept of it: the next pass probes again.
                #expect(WebDAVSettings.read(for: url, stateHome: state.url) == nil)
                proxy.decide = { _, _ in .none }
            }
            // What the server is, found.
            let remote = try #require(try SyncRemotes.remote(for: url, options: options) as? WebDAVRemote)
            #expect(proxy.faultCount > 0)
            #expect(remote.configuration.writeProtocol == .locking)
            #expect(WebDAVSettings.read(for: url, stateHome: state.url)?.probe.locksAreReal == true)
        }

        @Test func aServerThatHonoursNothingIsRefusedWithWhatItFailed() {
            var probe = WebDAVProbe()
            probe.hasETags = true
            probe.etagsChangeWithinASecond = true
            #expect(probe.writeProtocol == nil)
            let refusal = probe.refusal ?? ""
            #expect(refusal.contains("ignores If-Match"))
            #expect(refusal.contains("If-None-Match"))
            #expect(refusal.contains("--unsafe-server"))
            probe.honoursIfMatch = true
            probe.honoursIfNoneMatch = true
            #expect(probe.writeProtocol == .conditional)
            probe.etagsChangeWithinASecond = false
            #expect(probe.writeProtocol == nil)
            #expect(probe.refusal?.contains("FileETag Digest") == true)
        }

        /// A real server that ignores If-Match, If-None-Match and If, and fakes its locks: Apache
        /// behind a proxy that strips the conditions and answers LOCK itself.
        @Test func aServerThatIgnoresConditionsAndFakesLocksIsRefusedUnlessToldAndThenWritesAreReadBack()
            throws
        {
            let collection = try WebDAVServers.collection(on: .default)
            let proxy = try FaultProxy(target: collection.url)
            proxy.decide = { _, _ in .ignoreConditions }
            let url = proxy.url(for: collection.url)
            let remote = try WebDAVRemote(
                WebDAVRemote.Configuration(url: url, credentials: try WebDAVServers.credentials()))
            let probe = try WebDAVProbe.run(on: remote)
            #expect(!probe.honoursIfMatch && !probe.honoursIfNoneMatch && !probe.locksAreReal)
            #expect(probe.writeProtocol == nil)

            let state = try TemporaryFolder()
            var options = try WebDAVServers.options(keepingSettingsIn: state)
            let refused = #expect(throws: RemoteSetupError.self) {
                _ = try SyncRemotes.remote(for: url.absoluteString, options: options)
            }
            #expect(refused?.kind == .refused)
            #expect(refused?.message.contains("ignores If-Match") == true)
            #expect(refused?.message.contains("--unsafe-server") == true)

            // Told to go on: writes are conditional where the server listens, and read back.
            options.allowsUnsafeServer = true
            let unsafe = try #require(
                try SyncRemotes.remote(for: url.absoluteString, options: options) as? WebDAVRemote)
            #expect(unsafe.configuration.verifiesWrites && unsafe.configuration.writeProtocol == .conditional)
            let path = RemotePath("note.txt")
            let tag = try #require(
                try unsafe.write(path, from: UploadSource(Data("mine\n".utf8)), condition: .absent))
            #expect(try unsafe.entry(at: path)?.tag == tag)
            // Another client's write lands between the look and the write-back check: found.
            proxy.decide = { method, _ in
                method == "GET"
                    ? .respond(status: 200, contentType: "text/plain", body: Data("theirs\n".utf8))
                    : .ignoreConditions
            }
            let overwritten = #expect(throws: RemoteError.self) {
                try unsafe.write(
                    path, from: UploadSource(Data("mine again\n".utf8)), condition: .matches(tag))
            }
            #expect(overwritten?.kind == .preconditionFailed)
        }

        @Test func aFileLockedByAnotherClientIsNotWrittenAndIsWrittenOnceTheLockGoes() throws {
            let (remote, _, _) = try WebDAVServers.collection(on: .default)
            let path = RemotePath("locked.txt")
            let tag = try #require(
                try remote.write(path, from: UploadSource(Data("theirs\n".utf8)), condition: .absent))
            // Another client's lock, taken as any WebDAV client takes one (a device of its own:
            // a lock of this device's would be given back as one a killed pass left).
            var other = WebDAVRemote.Configuration(
                url: remote.base, credentials: try WebDAVServers.credentials())
            other.device = DeviceIdentity(identifier: "another-client", name: "elsewhere")
            let theirs = try WebDAVRemote(other)
            let token = try theirs.lock(path, matching: tag, .write, seconds: 30)
            let refused = #expect(throws: RemoteError.self) {
                try remote.write(path, from: UploadSource(Data("mine\n".utf8)), condition: .matches(tag))
            }
            #expect(refused?.description.contains("lock") == true)
            var read = Data()
            _ = try remote.read(path) { read.append($0) }
            #expect(read == Data("theirs\n".utf8))
            theirs.unlock(path, token)
            try remote.write(path, from: UploadSource(Data("mine\n".utf8)), condition: .matches(tag))
            read = Data()
            _ = try remote.read(path) { read.append($0) }
            #expect(read == Data("mine\n".utf8))
        }

        @Test(arguments: [WebDAVServers.Server.default, .digest])
        func twoDevicesSyncEditsMergesAndRenamesThroughApache(_ server: WebDAVServers.Server) throws {
            let folder = try TemporaryFolder()
            let remote = try WebDAVServers.collection(on: server).remote
            let a = try SyncDevice("a", remote: remote, in: folder)
            let b = try SyncDevice("b", remote: remote, in: folder)
            try Data("one\ntwo\nthree\n".utf8).write(to: a.url("plan.txt"))
            #expect(try a.sync().uploaded == 1)
            #expect(try b.sync().downloaded == 1)
            // Edits of different lines within the second Apache's ETag is weak: merged, both kept.
            try Data("ONE\ntwo\nthree\n".utf8).write(to: a.url("plan.txt"))
            try Data("one\ntwo\nTHREE\n".utf8).write(to: b.url("plan.txt"))
            _ = try a.sync()
            #expect(try b.sync().merged == 1)
            _ = try a.sync()
            for device in [a, b] {
                #expect(
                    try String(contentsOf: device.url("plan.txt"), encoding: .utf8) == "ONE\ntwo\nTHREE\n")
            }
            // A rename goes as a move: the other device gets the new name and not a second copy.
            try FileManager.default.moveItem(at: a.url("plan.txt"), to: a.url("renamed.txt"))
            #expect(try a.sync().moved == 1)
            _ = try b.sync()
            #expect(FileManager.default.fileExists(atPath: b.url("renamed.txt").path))
            #expect(!FileManager.default.fileExists(atPath: b.url("plan.txt").path))
            #expect(
                try remote.list(.root).entries.map(\.name).filter { !$0.hasPrefix(".") } == ["renamed.txt"])
        }

        @Test func aLargeFileGoesUpStreamedAndComesDownThroughAFileWhole() throws {
            let remote = try WebDAVServers.collection(on: .default).remote
            var generator = SeededGenerator(seed: 9)
            let bytes = Data((0..<(12 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let path = RemotePath("large.bin")
            let tag = try #require(try remote.write(path, from: UploadSource(bytes), condition: .absent))
            var read = Data()
            var chunks = 0
            #expect(
                try remote.read(path, expectedSize: Int64(bytes.count)) {
                    read.append($0)
                    chunks += 1
                } == tag)
            #expect(read == bytes)
            #expect(chunks >= 12)
            // Written over under its lock, streamed again.
            let edited = bytes.prefix(5 << 20) + Data("edited".utf8)
            try remote.write(path, from: UploadSource(edited), condition: .matches(tag))
            read = Data()
            _ = try remote.read(path, expectedSize: Int64(edited.count)) { read.append($0) }
            #expect(read == edited)
        }

        @Test func aTemporaryFileACrashLeftIsRemovedOnceADayOldAndOneInProgressIsNot() throws {
            let (remote, _, folder) = try WebDAVServers.collection(on: .default)
            let day = Date(timeIntervalSinceNow: -90_000)
            let abandoned = RemotePath(WebDAVRemote.temporaryName(now: day))
            let recent = RemotePath(WebDAVRemote.temporaryName(now: Date()))
            for path in [abandoned, recent] {
                let answer = try remote.send(
                    remote.request("PUT", remote.url(path)), body: .data(Data("half".utf8)), .write, path)
                #expect(answer.status == 201)
            }
            #expect(try remote.list(.root).entries.isEmpty)
            let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                $0.hasPrefix(WebDAVRemote.temporaryPrefix)
            }
            #expect(left == [recent.name])
        }

        @Test func aWrongPasswordIsA401NamedWithoutThePassword() throws {
            let url = try WebDAVServers.url(.default)
            let secret = "not-the-password-\(UUID().uuidString)"
            let remote = try WebDAVRemote(
                WebDAVRemote.Configuration(url: url, credentials: .init(user: "sync", password: secret)))
            let error = #expect(throws: RemoteError.self) { _ = try remote.list(.root) }
            #expect(error?.kind == .permissionDenied)
            #expect(error?.description.contains("401") == true)
            #expect(error?.description.contains(secret) == false)
            // No credentials at all: the same answer, not a request waiting forever.
            let anonymous = try WebDAVRemote(WebDAVRemote.Configuration(url: url))
            #expect(throws: RemoteError.self) { _ = try anonymous.list(.root) }
        }

        @Test func plainHTTPToAnotherComputerIsRefusedUnlessAllowed() throws {
            let url = URL(string: "http://files.example.com/dav/")!
            let error = #expect(throws: RemoteError.self) {
                _ = try WebDAVRemote(WebDAVRemote.Configuration(url: url))
            }
            #expect(error?.description.contains("https") == true)
            var allowed = WebDAVRemote.Configuration(url: url)
            allowed.allowsInsecureHTTP = true
            _ = try WebDAVRemote(allowed)
            #expect(throws: RemoteError.self) {
                _ = try WebDAVRemote(
                    WebDAVRemote.Configuration(url: URL(string: "https://ana:secret@files.example.com/")!))
            }
        }

        @Test func credentialsComeFromTheFileTheEnvironmentOrNetrcInThatOrder() throws {
            let folder = try TemporaryFolder()
            let url = URL(string: "https://files.example.com/dav/")!
            let netrc = folder.file("netrc")
            try Data(
                "machine other.example.com login x password y\nmachine files.example.com\n  login ana password fromnetrc\n"
                    .utf8
            )
            .write(to: netrc)
            let file = folder.file("password")
            try Data("fromfile\n".utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)

            var sources = WebDAVCredentialSources(environment: [:], netrc: netrc)
            #expect(try sources.credentials(for: url)?.user == "ana")
            #expect(try sources.credentials(for: url)?.password == "fromnetrc")
            sources.environment = ["DOCS_PASSWORD": "fromenvironment"]
            #expect(try sources.credentials(for: url)?.password == "fromenvironment")
            #expect(try sources.credentials(for: url)?.user == "ana")
            sources.passwordFile = file
            #expect(try sources.credentials(for: url)?.password == "fromfile")
            // A login of another name in netrc gives no password for this one.
            var other = WebDAVCredentialSources(user: "bo", environment: [:], netrc: netrc)
            #expect(try other.credentials(for: url) == nil)
            other.passwordFile = file
            #expect(try other.credentials(for: url)?.user == "bo")

            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
            let refused = #expect(throws: WebDAVCredentialSources.Failure.self) {
                _ = try sources.credentials(for: url)
            }
            #expect(refused?.description.contains("chmod 600") == true)
            #expect(refused?.description.contains("fromfile") == false)
        }

        @Test func theKeptSettingsArePrivateAndHoldNoPassword() throws {
            let state = try TemporaryFolder()
            let url = try WebDAVServers.url(.default)
            let password = try WebDAVServers.credentials().password
            var options = try WebDAVServers.options(keepingSettingsIn: state)
            let remote = try SyncRemotes.remote(for: url.absoluteString, options: options)
            #expect(remote is WebDAVRemote)
            let file = WebDAVSettings.file(for: WebDAVRemote.displayName(of: url), stateHome: state.url)
            let status = try #require(FileStatus(path: file.path))
            #expect(status.permissions & 0o777 == 0o600)
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains(password))
            #expect(text.contains("\"user\" : \"sync\""))
            // Kept: the next use does not probe again, and finds the user name without being told.
            options.credentials = WebDAVCredentialSources(
                environment: ["DOCS_PASSWORD": password], netrc: nil)
            let again = try #require(
                try SyncRemotes.remote(for: url.absoluteString, options: options) as? WebDAVRemote)
            _ = try again.list(.root)
        }
    }
}
