import DocumentKit
import Foundation
import Testing

/// `docs sync` end to end: two containers, each a device with its own version store and
/// journal, synced through a remote folder by the real `docs` in child processes; and `ste`
/// open on a document while the other device edits it.
@Suite("docs: sync", .serialized)
struct DocsSyncTests {
    /// A device: a container with its own data and state folders.
    final class Device {
        let folder: DocsFolder
        let remote: URL

        init(remote: URL) throws {
            folder = try DocsFolder()
            self.remote = remote
        }

        var stateHome: URL { folder.root.appendingPathComponent("state") }

        func docs(_ arguments: [String], input: Data? = nil) throws -> DocsResult {
            try folder.run(arguments, input: input, environment: ["XDG_STATE_HOME": stateHome.path])
        }
    }

    let remoteRoot: URL

    init() throws {
        remoteRoot = FileManager.default.temporaryDirectory
            .appendingPathComponent("docs-sync-remote-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: remoteRoot, withIntermediateDirectories: true)
    }

    var remoteURL: String { "file://" + remoteRoot.path }

    @Test func twoContainersSyncEditsConflictsAndResolutionsThroughAFolder() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        let b = try Device(remote: remoteRoot)
        #expect(try a.docs(["new", "Notes", "--from", "-"], input: Data("first\n".utf8)).status == 0)

        let first = try a.docs(["sync", "--remote", remoteURL])
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.contains("1 uploaded"), "\(first.output)")
        let down = try b.docs(["sync", "--remote", remoteURL, "--json"])
        #expect(down.status == 0, "\(down.error)")
        #expect(down.output.contains("\"downloaded\":1"), "\(down.output)")
        #expect(try b.folder.contents("Notes.txt") == "first\n")
        #expect(try b.docs(["status"]).output.hasPrefix("synced\tNotes\nversions\t"))

        // The remote is remembered: later syncs name none.
        try b.folder.write("Notes.txt", "second\n")
        #expect(try b.docs(["status"]).output.hasPrefix("to upload\tNotes\nversions\t"))
        #expect(try b.docs(["sync"]).status == 0)
        #expect(try a.docs(["sync"]).status == 0)
        #expect(try a.folder.contents("Notes.txt") == "second\n")

        // Both edit the same line: b's edit goes up first; a keeps b's at the path and its own
        // as a conflict version, which b shows too.
        try a.folder.write("Notes.txt", "from a\n")
        try b.folder.write("Notes.txt", "from b\n")
        #expect(try b.docs(["sync"]).status == 0)
        let conflicted = try a.docs(["sync"])
        #expect(conflicted.status == 0)
        #expect(conflicted.output.contains("1 conflicted"), "\(conflicted.output)")
        #expect(try a.folder.contents("Notes.txt") == "from b\n")
        #expect(try b.docs(["sync"]).status == 0)
        for device in [a, b] {
            let versions = try device.docs(["versions", "Notes", "--json"]).output
            #expect(versions.contains("\"conflict\":true,\"resolved\":false"), "\(versions)")
        }

        // Resolved on b, keeping its own: a hears of it and has nothing left to resolve.
        let resolved = try b.docs(["resolve", "Notes", "--keep", "mine"])
        #expect(resolved.status == 0, "\(resolved.error)")
        #expect(try b.folder.contents("Notes.txt") == "from b\n")
        #expect(try b.docs(["sync"]).status == 0)
        #expect(try a.docs(["sync"]).status == 0)
        for device in [a, b] {
            let versions = try device.docs(["versions", "Notes", "--json"]).output
            #expect(!versions.contains("\"resolved\":false"), "\(versions)")
        }
        #expect(try a.folder.contents("Notes.txt") == b.folder.contents("Notes.txt"))
    }

    /// A conflict sync made merges from the base sync recorded, on the device that did not
    /// make it: the part both changed is marked naming the device the other text came from,
    /// the other device's change apart from it is taken, and the resolution reaches the other
    /// device.
    @Test func aSyncConflictMergesOnTheOtherDeviceFromTheBaseSyncRecorded() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        let b = try Device(remote: remoteRoot)
        #expect(
            try a.docs(["new", "Notes", "--from", "-"], input: Data("title\nmiddle\nend\n".utf8)).status == 0)
        let steps: [(Device, String?)] = [
            (a, nil), (b, nil), (a, "title A\nmiddle\nend\n"), (b, "title B\nmiddle\nEND\n"), (b, nil),
            (a, nil),
            (b, nil),
        ]
        for (device, text) in steps {
            if let text {
                try device.folder.write("Notes.txt", text)
            } else {
                #expect(try device.docs(["sync", "--remote", remoteURL]).status == 0)
            }
        }
        // b holds its own text, and a's as a conflict version from a's device.
        #expect(try b.folder.contents("Notes.txt") == "title B\nmiddle\nEND\n")
        let merged = try b.docs(["resolve", "Notes", "--merge"])
        #expect(merged.status == 0, "\(merged.error)")
        #expect(merged.output.contains("1 part both sides changed marked"), "\(merged.output)")
        let text = try b.folder.contents("Notes.txt")
        #expect(text.hasPrefix("<<<<<<< this device\ntitle B\n=======\ntitle A\n>>>>>>> "), "\(text)")
        #expect(text.contains(" (device "), "the other device by its identifier: \(text)")
        #expect(text.hasSuffix("\nmiddle\nEND\n"), "\(text)")
        // The merge and the resolution reach a.
        #expect(try b.docs(["sync"]).status == 0)
        #expect(try a.docs(["sync"]).status == 0)
        #expect(try a.folder.contents("Notes.txt") == text)
        #expect(!(try a.docs(["versions", "Notes", "--json"]).output.contains("\"resolved\":false")))
    }

    /// Both devices run on this computer, so their computers have one host name, as cloned
    /// machines and Raspberry Pis do: each device's "mine" is still its own text.
    @Test func keepMineKeepsEachDevicesOwnTextThoughBothShareAHostName() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        let b = try Device(remote: remoteRoot)
        #expect(try a.docs(["new", "Notes", "--from", "-"], input: Data("first\n".utf8)).status == 0)
        #expect(try a.docs(["sync", "--remote", remoteURL]).status == 0)
        #expect(try b.docs(["sync", "--remote", remoteURL]).status == 0)
        try a.folder.write("Notes.txt", "typed on a\n")
        try b.folder.write("Notes.txt", "typed on b\n")
        #expect(try b.docs(["sync"]).status == 0)
        #expect(try a.docs(["sync"]).output.contains("1 conflicted"))
        #expect(try b.docs(["sync"]).status == 0)

        // The same computer's name on both, told apart by the device.
        struct Listing: Decodable {
            struct Version: Decodable {
                var computer: String?
                var device: String?
                var thisDevice: Bool
                var conflict: Bool
                var resolved: Bool
            }
            var versions: [Version]
        }
        var devices: Set<String> = []
        for (device, isA) in [(a, true), (b, false)] {
            let listed = try device.docs(["versions", "Notes", "--json"])
            let listing = try JSONDecoder().decode(Listing.self, from: Data(listed.output.utf8))
            let conflict = try #require(
                listing.versions.first { $0.conflict && !$0.resolved }, "\(listed.output)")
            #expect(conflict.computer == ProcessInfo.processInfo.hostName)
            #expect(conflict.thisDevice == isA, "\(listed.output)")
            devices.insert(try #require(conflict.device))
            let text = try device.docs(["versions", "Notes"]).output
            #expect(
                text.contains(isA ? ", this device" : ", device \(conflict.device!.prefix(8))"), "\(text)")
        }
        #expect(devices.count == 1)

        for (device, own) in [(a, "typed on a\n"), (b, "typed on b\n")] {
            let resolved = try device.docs(["resolve", "Notes", "--keep", "mine"])
            #expect(resolved.status == 0, "\(resolved.error)")
            #expect(try device.folder.contents("Notes.txt") == own)
        }
    }

    @Test func badRemotesAreUsageErrorsNamingTheURL() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        let none = try a.docs(["sync"])
        #expect(none.status == 2)
        #expect(none.error.contains("no remote yet"), "\(none.error)")
        let web = try a.docs(["sync", "--remote", "ftp://example.org/dav"])
        #expect(web.status == 2)
        #expect(web.error.contains("ftp://example.org/dav"))
        let password = try a.docs(["sync", "--remote", "https://example.org/dav/", "--password", "secret"])
        #expect(password.status == 2)
        #expect(password.error.contains("--password-file"), "\(password.error)")
        let missing = try a.docs(["sync", "--remote", remoteURL + "/missing"])
        #expect(missing.status == 2)
        #expect(missing.error.contains("missing"), "\(missing.error)")
        let inside = try a.docs(["sync", "--remote", "file://" + a.folder.root.path])
        #expect(inside.status == 2)
        #expect(inside.error.contains("overlap"), "\(inside.error)")
        #expect(try a.docs(["sync", "--once", "--watch", "--remote", remoteURL]).status == 2)
    }

    /// The servers scripts/test runs (`DOCUMENTSYNC_WEBDAV_*`).
    private func webDAV(_ name: String) throws -> String { try testServerSetting(name) }

    @Test func twoContainersSyncThroughApacheWithoutThePasswordOnTheCommandLine() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let passwordFile = try webDAV("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE")
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8)
        let user = try webDAV("DOCUMENTSYNC_WEBDAV_USER")
        // A collection of its own on the server, made as any WebDAV client makes one.
        let server = try webDAV("DOCUMENTSYNC_WEBDAV_DEFAULT")
        let url = try makeCollection(in: server, user: user, password: password)

        let a = try Device(remote: remoteRoot)
        let b = try Device(remote: remoteRoot)
        #expect(try a.docs(["new", "Plan", "--from", "-"], input: Data("one\ntwo\n".utf8)).status == 0)
        let up = try a.docs(["sync", "--remote", url, "--user", user, "--password-file", passwordFile])
        #expect(up.status == 0, "\(up.error)")
        #expect(up.output.contains("1 uploaded"), "\(up.output)")
        // The other device reads its password from ~/.netrc, as curl does.
        let home = b.folder.root.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try Data("machine 127.0.0.1\n  login \(user)\n  password \(password)\n".utf8)
            .write(to: home.appendingPathComponent(".netrc"))
        let down = try b.folder.run(
            ["sync", "--remote", url], environment: ["XDG_STATE_HOME": b.stateHome.path, "HOME": home.path])
        #expect(down.status == 0, "\(down.error)")
        #expect(try b.docs(["show", "Plan"]).output == "one\ntwo\n")
        // What the server is, in words.
        let test = try a.docs(["remote", "test", url, "--user", user, "--password-file", passwordFile])
        #expect(test.status == 0, "\(test.error)")
        #expect(test.output.contains("real WebDAV locks"), "\(test.output)")
        // The password is in no output and no file of the device's state.
        for result in [up, down, test] {
            #expect(!result.output.contains(password) && !result.error.contains(password))
        }
        let remotes = a.stateHome.appendingPathComponent("DocumentKit/remotes")
        for name in try FileManager.default.contentsOfDirectory(atPath: remotes.path) {
            let file = remotes.appendingPathComponent(name)
            #expect(!(try String(contentsOf: file, encoding: .utf8)).contains(password))
            let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
        // Remembered: the next sync names neither the remote nor the user.
        try Data("one\ntwo\nthree\n".utf8).write(to: a.folder.url("Plan.txt"))
        let again = try a.folder.run(
            ["sync"], environment: ["XDG_STATE_HOME": a.stateHome.path, "DOCS_PASSWORD": password])
        #expect(again.status == 0, "\(again.error)")
        #expect(again.output.contains("1 uploaded"), "\(again.output)")
    }

    /// Sync end to end on each kind of WebDAV server the tests run: Apache, wsgidav (refused by
    /// the probe for its whole-second ETags, so with `--unsafe-server`), SabreDAV with
    /// Nextcloud's fake locks and with its own locks (kept after a delete). A delete, a rename
    /// and an edit that beats a delete (either device syncing first) go through, every pass
    /// with exit status 0, and `docs status` says synced right after a sync.
    @Test(arguments: ["DEFAULT", "WSGIDAV", "SABRE", "SABRE_LOCKS"])
    func deletesRenamesAndEditsThatBeatDeletesSyncThroughEachServer(_ server: String) throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let passwordFile = try webDAV("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE")
        let password = try String(contentsOfFile: passwordFile, encoding: .utf8)
        let user = try webDAV("DOCUMENTSYNC_WEBDAV_USER")
        let url = try makeCollection(
            in: try webDAV("DOCUMENTSYNC_WEBDAV_" + server), user: user, password: password)
        let credentials =
            ["--user", user, "--password-file", passwordFile]
            + (server == "WSGIDAV" ? ["--unsafe-server"] : [])
        let remote = ["--remote", url] + credentials
        let a = try Device(remote: remoteRoot)
        let b = try Device(remote: remoteRoot)
        func sync(_ device: Device, _ step: String) throws {
            let pass = try device.docs(["sync"] + remote)
            #expect(pass.status == 0, "\(server), \(step): \(pass.output)\(pass.error)")
        }
        func text(_ device: Device, _ name: String) -> String? {
            try? device.folder.contents(name + ".txt")
        }
        // (Texts of different sizes: wsgidav cannot tell two of one size within a second apart.)
        for (name, text) in [("Plan", "plan\n"), ("Notes", "some notes\n"), ("Old", "an old text\n")] {
            #expect(try a.docs(["new", name, "--from", "-"], input: Data(text.utf8)).status == 0)
        }
        try sync(a, "first upload")
        try sync(b, "first download")
        for device in [a, b] {
            let status = try device.docs(["status"] + credentials)
            #expect(status.status == 0, "\(server): \(status.error)")
            #expect(
                status.output.split(separator: "\n").allSatisfy {
                    $0.hasPrefix("synced\t") || $0.hasPrefix("versions\t")
                },
                "\(server): \(status.output)")
        }

        // A delete and a rename.
        try FileManager.default.removeItem(at: a.folder.url("Old.txt"))
        try FileManager.default.moveItem(at: a.folder.url("Notes.txt"), to: a.folder.url("Ideas.txt"))
        try sync(a, "delete and rename")
        try sync(b, "delete and rename arriving")
        #expect(text(b, "Old") == nil && text(b, "Notes") == nil, "\(server)")
        #expect(text(b, "Ideas") == "some notes\n", "\(server)")

        // An edit beats a delete: the device that deleted syncs first, the edit comes back.
        try Data("plan, edited on b\n".utf8).write(to: b.folder.url("Plan.txt"))
        try FileManager.default.removeItem(at: a.folder.url("Plan.txt"))
        try sync(a, "a delete")
        try sync(b, "an edit after the delete")
        try sync(a, "the edit arriving")
        #expect(text(a, "Plan") == "plan, edited on b\n", "\(server)")
        // And the device that edited syncs first: the delete does not take the edit.
        try Data("plan, edited on a at length\n".utf8).write(to: a.folder.url("Plan.txt"))
        try FileManager.default.removeItem(at: b.folder.url("Plan.txt"))
        try sync(a, "an edit")
        try sync(b, "a delete after the edit")
        #expect(text(b, "Plan") == "plan, edited on a at length\n", "\(server)")
        try sync(a, "the last pass")
        for device in [a, b] {
            let status = try device.docs(["status"] + credentials)
            #expect(
                status.output.split(separator: "\n").filter { !$0.hasPrefix("versions\t") }.sorted() == [
                    "synced\tIdeas", "synced\tPlan",
                ],
                "\(server): \(status.output)")
        }
    }

    /// A server whose answers are lost at the first contact (the connection reset, the answer
    /// cut short), before anything is known of it: exit status 1, a failure the next sync
    /// tries again, not 2 (a server that cannot be used, which the user must change).
    @Test(arguments: ["reset", "cut"])
    func aFirstContactWhoseAnswerIsLostIsExitStatusOne(_ fault: String) throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        let program = a.folder.root.appendingPathComponent("server.sh")
        let answer =
            fault == "reset"
            ? "exit 0\n"
            : """
            timeout 0.3 cat >/dev/null
            printf 'HTTP/1.1 207 Multi-Status\\r\\nContent-Type: application/xml\\r\\nContent-Length: 4000\\r\\n\\r\\n'
            printf '<?xml version="1.0" encoding="utf-8"?>\\n<D:multistatus xmlns:D="DAV:"><D:response>'

            """
        try Data(("#!/bin/sh\n" + answer).utf8).write(to: program)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: program.path)
        let passwordFile = a.folder.root.appendingPathComponent("password")
        try Data("secret".utf8).write(to: passwordFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: passwordFile.path)
        let server = Relay(port: Relay.freePort(), program: program, resets: fault == "reset")
        try server.start()
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/dav/"
        let pass = try a.docs([
            "sync", "--remote", url, "--user", "sync", "--password-file", passwordFile.path,
        ])
        #expect(pass.status == 1, "\(fault): \(pass.output)\(pass.error)")
        #expect(pass.error.contains("tries again"), "\(fault): \(pass.error)")
        #expect(!pass.error.contains("cannot be used"), "\(fault): \(pass.error)")
    }

    /// Another user who can read the remote folder, not write it, cannot stall sync: not by
    /// holding the lock file older versions used, nor this version's, which it cannot open.
    @Test func aUserWhoCanOnlyReadTheRemoteFolderCannotStallSync() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        try #require(getuid() == 0, "needs root to run a program as another user")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: remoteRoot.path)
        let a = try Device(remote: remoteRoot)
        #expect(try a.docs(["new", "Plan", "--from", "-"], input: Data("one\n".utf8)).status == 0)
        let first = try a.docs(["sync", "--remote", remoteURL])
        #expect(first.status == 0, "\(first.error)")

        // The lock file of older versions, as they made it: anyone may open it.
        let metadata = remoteRoot.appendingPathComponent(".documentsync")
        let legacy = metadata.appendingPathComponent("lock")
        if !FileManager.default.fileExists(atPath: legacy.path) {
            #expect(
                FileManager.default.createFile(
                    atPath: legacy.path, contents: nil, attributes: [.posixPermissions: 0o644]))
        }
        // Where each holder says it holds its lock: a file the holders may write.
        let held = a.folder.root.appendingPathComponent("held")
        #expect(
            FileManager.default.createFile(
                atPath: held.path, contents: nil, attributes: [.posixPermissions: 0o666]))
        var holders: [Process] = []
        defer {
            for holder in holders {
                kill(holder.processIdentifier, SIGKILL)
                holder.waitUntilExit()
            }
        }
        // Every file there but the change marker, which no sync locks (a holder of it stalls
        // nothing).
        for lock in try FileManager.default.contentsOfDirectory(atPath: metadata.path).sorted()
        where lock != "changed" {
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            holder.arguments = [
                "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/flock", "--shared", "--no-fork",
                metadata.appendingPathComponent(lock).path, "/bin/sh", "-c",
                "echo \"$0\" >> \"$1\"; exec sleep 600", lock, held.path,
            ]
            holder.standardError = FileHandle.nullDevice
            try holder.run()
            holders.append(holder)
        }
        // Each holder either holds its lock (the old one) or could not open it (this one).
        let settled = ContinuousClock.now + .seconds(10)
        func heldLocks() -> [String] {
            ((try? String(contentsOf: held, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        while ContinuousClock.now < settled
            && heldLocks().count + holders.filter({ !$0.isRunning }).count < holders.count
        {
            usleep(10_000)
        }
        #expect(heldLocks() == ["lock"])

        try a.folder.write("Two.txt", "two\n")
        let second = try a.folder.run(
            ["sync"], environment: ["XDG_STATE_HOME": a.stateHome.path], timeout: .seconds(30))
        #expect(!second.timedOut, "sync waited for another user's lock")
        #expect(second.status == 0, "\(second.error)")
        #expect(second.output.contains("1 uploaded"), "\(second.output)")
        #expect(
            FileManager.default.contents(atPath: remoteRoot.appendingPathComponent("Two.txt").path)
                == Data("two\n".utf8))
    }

    /// A remote folder that is the container's folder or one around it, reached through a
    /// link, a link after `..`, or another mount of it, is refused by sync and by remote add,
    /// instead of copying the container into itself one level deeper each pass.
    @Test func aRemoteFolderReachedThroughAnAliasOfTheContainerIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        #expect(try a.docs(["new", "Plan", "--from", "-"], input: Data("one\n".utf8)).status == 0)
        let root = a.folder.root
        let links = root.appendingPathComponent("links", isDirectory: true)
        let inner = a.folder.container.appendingPathComponent("inner", isDirectory: true)
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: links.appendingPathComponent("x/y"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: links.appendingPathComponent("levels"), withIntermediateDirectories: true)
        let link = { (name: String, target: String) throws -> String in
            let path = links.appendingPathComponent(name).path
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            return path
        }
        let aliases = [
            // The folder around the container (the issue's ~/Documents).
            try link("documents", root.path),
            // Links at two levels, the second relative.
            try link("levels/up", "../../..") + "/" + root.lastPathComponent,
            // `..` after a link into the container: the container itself.
            try link("x/y/deep", inner.path) + "/..",
            // A folder inside the container.
            try link("inner", inner.path),
        ]
        // Bounded: a sync that is not refused copies the container into itself for a long time.
        let state = ["XDG_STATE_HOME": a.stateHome.path]
        for alias in aliases {
            let synced = try a.folder.run(
                ["sync", "--remote", "file://" + alias], environment: state, timeout: .seconds(60))
            #expect(synced.status == 2 && synced.error.contains("overlap"), "\(alias): \(synced.error)")
            let added = try a.folder.run(
                ["remote", "add", "alias", "file://" + alias], environment: state, timeout: .seconds(60))
            #expect(added.status == 2 && added.error.contains("overlap"), "\(alias): \(added.error)")
        }

        // Another mount of the folder around the container, in a mount namespace of its own.
        let mountPoint = root.appendingPathComponent("mounted", isDirectory: true)
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        let namespace = getuid() == 0 ? ["--mount"] : ["--map-root-user", "--mount"]
        let mounted = try runDocs(
            URL(fileURLWithPath: "/usr/bin/unshare"),
            namespace + [
                "--propagation", "private", "/bin/sh", "-c",
                "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"",
                "sh", root.path, mountPoint.path, DocsBinary.url.path, "sync", "--remote",
                "file://" + mountPoint.path,
            ],
            environment: a.folder.environment.merging(state) { $1 }, input: nil, scratch: root,
            timeout: .seconds(60))
        #expect(mounted.status == 2 && mounted.error.contains("overlap"), "\(mounted.error)")

        // Nothing was copied anywhere: the container holds what it held.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: a.folder.container.path).sorted() == [
                "Plan.txt", "inner",
            ])
        #expect(try FileManager.default.contentsOfDirectory(atPath: inner.path).isEmpty)
        #expect(
            !FileManager.default.fileExists(
                atPath: a.folder.configHome.appendingPathComponent("DocumentKit/ubiquity.json").path))
    }

    /// `ste` shows a document on one device while the other edits it: the sync's download
    /// reaches ste as a coordinated write, which reloads it; what ste then saves goes back.
    @Test func steOpenOnADocumentReloadsTheOtherDevicesEditAndItsTypingSyncsBack() async throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try Device(remote: remoteRoot)
        let ste = try SteSession { container in
            try Data("shared start\n".utf8).write(to: container.appendingPathComponent("Shared.txt"))
        }
        let steState = ["XDG_STATE_HOME": ste.root.appendingPathComponent("state").path]
        #expect(try ste.docs(["sync", "--remote", remoteURL], environment: steState).status == 0)
        #expect(try a.docs(["sync", "--remote", remoteURL]).status == 0)
        #expect(try a.folder.contents("Shared.txt") == "shared start\n")

        ste.start()
        #expect(await ste.waitForScreen(containing: "Shared"))
        ste.keys("Enter")
        #expect(await ste.waitForScreen(containing: "shared start"))

        try a.folder.write("Shared.txt", "edited on the other device\n")
        #expect(try a.docs(["sync"]).status == 0)
        let pulled = try ste.docs(["sync"], environment: steState)
        #expect(pulled.status == 0, "\(pulled.error)")
        #expect(await ste.waitForScreen(containing: "edited on the other device"))

        ste.keys("C-End")
        ste.type("typed in ste")
        #expect(await ste.wait { ste.text(of: "Shared.txt")?.contains("typed in ste") == true })
        ste.keys("C-q")
        #expect(await ste.wait { ste.exitStatus != nil })
        #expect(try ste.docs(["sync"], environment: steState).status == 0)
        #expect(try a.docs(["sync"]).status == 0)
        #expect(try a.folder.contents("Shared.txt") == ste.text(of: "Shared.txt"))
        #expect(try a.folder.contents("Shared.txt").contains("typed in ste"))
        #expect(ste.conflictTexts(of: "Shared.txt").isEmpty)
    }
}

struct DocsSyncSetupError: Error, CustomStringConvertible {
    var description: String
}
