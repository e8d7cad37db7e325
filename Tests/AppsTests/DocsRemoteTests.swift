import Foundation
import Testing

/// `docs remote add|list|remove|test` and what they mean for `docs sync` and `docs status`:
/// the real `docs`, in child processes, each device with its own settings.
@Suite("docs: remotes", .serialized)
struct DocsRemoteTests {
    /// `docs remote list --json`, decoded.
    struct Listing: Decodable {
        struct Remote: Decodable, Equatable {
            var name: String
            var identifier: String
            var container: String
            var url: String
            var user: String?
            var downloadsEagerly: Bool
            var agentRunning: Bool
        }
        var remotes: [Remote]
    }

    /// `docs status --json`, decoded.
    struct Status: Decodable {
        struct Document: Decodable, Equatable {
            var name: String
            var file: String
            var state: String
        }
        var documents: [Document]
    }

    let remoteRoot: URL

    init() throws {
        remoteRoot = FileManager.default.temporaryDirectory
            .appendingPathComponent("docs-remote-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: remoteRoot, withIntermediateDirectories: true)
    }

    var remoteURL: String { "file://" + remoteRoot.path }

    func docs(
        _ folder: DocsFolder, _ arguments: [String], input: Data? = nil, environment: [String: String] = [:]
    )
        throws -> DocsResult
    {
        try folder.run(
            arguments, input: input,
            environment: ["XDG_STATE_HOME": folder.root.appendingPathComponent("state").path].merging(
                environment
            ) { $1 })
    }

    func listing(_ folder: DocsFolder) throws -> Listing {
        let result = try docs(folder, ["remote", "list", "--json"])
        try #require(result.status == 0, "\(result.error)")
        return try JSONDecoder().decode(Listing.self, from: result.outputData)
    }

    @Test func addListTestAndRemoveARemoteWithItsSettingsPrivate() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let device = try DocsFolder()
        #expect(try listing(device).remotes.isEmpty)

        let added = try docs(device, ["remote", "add", "notes", remoteURL, "--interval", "5"])
        #expect(added.status == 0, "\(added.error)")
        #expect(added.output.contains("iCloud.notes"), "\(added.output)")
        let remotes = try listing(device).remotes
        #expect(
            remotes == [
                .init(
                    name: "notes", identifier: "iCloud.notes",
                    container: device.container.resolvingSymlinksInPath().path, url: remoteURL, user: nil,
                    downloadsEagerly: true, agentRunning: false)
            ])
        let plain = try docs(device, ["remote", "list"])
        #expect(plain.output.hasPrefix("notes\t"), "\(plain.output)")

        // The settings are the owner's alone.
        let file = device.configHome.appendingPathComponent("DocumentKit/ubiquity.json")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: file.deletingLastPathComponent().path)
        #expect(folder[.posixPermissions] as? Int == 0o700)

        // A second container, with an identifier of its own; names and folders are one each.
        let other = device.root.appendingPathComponent("Other")
        let second = try docs(
            device,
            [
                "remote", "add", "work", remoteURL, "--identifier", "iCloud.com.example.Work", "--container",
                other.path,
            ])
        #expect(second.status == 0, "\(second.error)")
        #expect(try listing(device).remotes.map(\.identifier) == ["iCloud.notes", "iCloud.com.example.Work"])
        let again = try docs(device, ["remote", "add", "notes", remoteURL, "--container", other.path + "2"])
        #expect(again.status == 1)
        #expect(again.error.contains("a remote named “notes” exists"), "\(again.error)")
        let overlapping = try docs(device, ["remote", "add", "more", remoteURL])
        #expect(overlapping.status == 1)
        #expect(overlapping.error.contains("overlaps"), "\(overlapping.error)")

        let tested = try docs(device, ["remote", "test", "notes"])
        #expect(tested.status == 0, "\(tested.error)")
        #expect(tested.output.contains("safe"), "\(tested.output)")

        #expect(try docs(device, ["remote", "remove", "work"]).status == 0)
        #expect(try listing(device).remotes.map(\.name) == ["notes"])
        let unknown = try docs(device, ["remote", "remove", "work"])
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("no remote named “work”"), "\(unknown.error)")
        #expect(try docs(device, ["remote", "test", "work"]).status == 1)
    }

    @Test func badUsageOfTheRemoteCommandsIsExitStatusTwoAndChangesNothing() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let device = try DocsFolder()
        for arguments in [
            ["remote"], ["remote", "frobnicate"], ["remote", "add", "notes"], ["remote", "add"],
            ["remote", "add", "bad name", remoteURL], ["remote", "add", "-x", remoteURL],
            ["remote", "add", "../up", remoteURL], ["remote", "add", "notes", remoteURL, "extra"],
            ["remote", "add", "notes", "ftp://example.org/docs"],
            ["remote", "add", "notes", remoteURL + "/missing"],
            ["remote", "add", "notes", "https://ana@example.org/docs/"],
            ["remote", "add", "notes", remoteURL, "--json"], ["remote", "remove"],
            ["remote", "list", "extra"], ["remote", "list", "--interval", "3"],
            ["remote", "test"], ["list", "--identifier", "x"], ["sync", "--identifier", "x"],
            ["remote", "add", "n", remoteURL, "--interval", "soon"],
            ["sync", "--remote", "nosuchname"],
        ] {
            let result = try docs(device, arguments)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.error)")
            #expect(result.error.contains("Try “docs"), "\(arguments): \(result.error)")
        }
        #expect(
            !FileManager.default.fileExists(
                atPath: device.configHome.appendingPathComponent("DocumentKit/ubiquity.json").path))
    }

    @Test func twoDevicesAddedToOneRemoteSyncWithoutNamingItAndReportStatusAsJSON() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try DocsFolder()
        let b = try DocsFolder()
        for device in [a, b] {
            #expect(try docs(device, ["remote", "add", "home", remoteURL]).status == 0)
        }
        #expect(try docs(a, ["new", "Plan", "--from", "-"], input: Data("one\n".utf8)).status == 0)
        let before = try JSONDecoder().decode(
            Status.self, from: try docs(a, ["status", "--json"]).outputData)
        #expect(before.documents == [.init(name: "Plan", file: "Plan.txt", state: "to upload")])
        #expect(try docs(a, ["sync"]).status == 0)
        #expect(try docs(b, ["sync", "--remote", "home"]).status == 0)
        #expect(try b.contents("Plan.txt") == "one\n")
        let after = try JSONDecoder().decode(Status.self, from: try docs(b, ["status", "--json"]).outputData)
        #expect(after.documents == [.init(name: "Plan", file: "Plan.txt", state: "synced")])

        // Removed: the documents stay; sync has no remote to go to but the journal's.
        #expect(try docs(b, ["remote", "remove", "home"]).status == 0)
        #expect(try b.contents("Plan.txt") == "one\n")
    }

    /// `docs list --json`, decoded.
    struct DocumentList: Decodable {
        struct Document: Decodable, Equatable {
            var name: String
            var size: Int64
            var onServerOnly: Bool?
        }
        var documents: [Document]
    }

    @Test func evictAndDownloadKeepADocumentOnTheServerOnlyAndBringItBack() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let a = try DocsFolder()
        let b = try DocsFolder()
        // No agent is started on demand here: each command does its own work.
        let manual = ["DOCUMENTKIT_SYNC_AGENT": "manual"]
        func run(_ device: DocsFolder, _ arguments: [String], input: Data? = nil) throws -> DocsResult {
            try docs(device, arguments, input: input, environment: manual)
        }
        func list(_ device: DocsFolder) throws -> [DocumentList.Document] {
            try JSONDecoder().decode(DocumentList.self, from: try run(device, ["list", "--json"]).outputData)
                .documents
        }
        #expect(try run(a, ["remote", "add", "home", remoteURL]).status == 0)
        #expect(try run(b, ["remote", "add", "home", remoteURL, "--on-demand"]).status == 0)
        #expect(try listing(b).remotes.first?.downloadsEagerly == false)
        #expect(try run(a, ["new", "Plan", "--from", "-"], input: Data("the plan\n".utf8)).status == 0)
        #expect(try run(a, ["new", "Notes", "--from", "-"], input: Data("some notes\n".utf8)).status == 0)
        #expect(try run(a, ["sync"]).status == 0)

        // b lists both without downloading either.
        #expect(try run(b, ["sync"]).status == 0)
        #expect(
            try list(b) == [
                .init(name: "Notes", size: 11, onServerOnly: true),
                .init(name: "Plan", size: 9, onServerOnly: true),
            ])
        #expect(try run(b, ["list"]).output.contains("Plan  (on the server only)"))
        #expect(!FileManager.default.fileExists(atPath: b.container.appendingPathComponent("Plan.txt").path))
        let status = try JSONDecoder().decode(Status.self, from: try run(b, ["status", "--json"]).outputData)
        #expect(status.documents.map(\.state) == ["on the server only", "on the server only"])

        // Downloaded: here, and synced.
        let downloaded = try run(b, ["download", "Plan"])
        #expect(downloaded.status == 0, "\(downloaded.error)")
        #expect(try b.contents("Plan.txt") == "the plan\n")
        #expect(try list(b).first { $0.name == "Plan" }?.onServerOnly == nil)
        #expect(try run(b, ["download", "Plan"]).output.contains("here already"))

        // Changed here and not uploaded: not evicted, nothing changes.
        try b.write("Plan.txt", "the plan, changed on b\n")
        let refused = try run(b, ["evict", "Plan"])
        #expect(refused.status == 1)
        #expect(refused.error.contains("not uploaded"), "\(refused.error)")
        #expect(try b.contents("Plan.txt") == "the plan, changed on b\n")
        // Uploaded: evicted, and listed with its size on the server.
        #expect(try run(b, ["sync"]).status == 0)
        let evicted = try run(b, ["evict", "Plan"])
        #expect(evicted.status == 0, "\(evicted.error)")
        #expect(try list(b).first { $0.name == "Plan" } == .init(name: "Plan", size: 23, onServerOnly: true))
        let shown = try run(b, ["show", "Plan"])
        #expect(shown.status == 1 && shown.error.contains("kept on the server only"), "\(shown.error)")
        // Eviction deletes nothing: a still has it, and the remote.
        #expect(try run(b, ["sync"]).status == 0)
        #expect(try run(a, ["sync"]).status == 0)
        #expect(try a.contents("Plan.txt") == "the plan, changed on b\n")

        // Bad usage and unknown names.
        #expect(try run(b, ["evict"]).status == 2)
        #expect(try run(b, ["download", "Plan", "Notes"]).status == 2)
        #expect(try run(b, ["list", "--on-demand"]).status == 2)
        let unknown = try run(b, ["download", "Nothing"])
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("no such document"), "\(unknown.error)")
    }

    /// The servers scripts/test runs (`DOCUMENTSYNC_WEBDAV_*`).
    private func webDAV(_ name: String) throws -> String { try testServerSetting(name) }

    @Test func aWebDAVRemoteKeepsItsUserButNeverThePassword() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let password = try String(
            contentsOfFile: try webDAV("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE"), encoding: .utf8)
        let user = try webDAV("DOCUMENTSYNC_WEBDAV_USER")
        let url = try makeCollection(
            in: try webDAV("DOCUMENTSYNC_WEBDAV_DEFAULT"), user: user, password: password)
        let device = try DocsFolder()
        let secret = ["DOCS_PASSWORD": password]
        let wrong = try docs(
            device, ["remote", "add", "dav", url, "--user", user], environment: ["DOCS_PASSWORD": "wrong"])
        #expect(wrong.status != 0)
        let added = try docs(device, ["remote", "add", "dav", url, "--user", user], environment: secret)
        #expect(added.status == 0, "\(added.error)")
        #expect(try listing(device).remotes.first?.user == user)
        #expect(try docs(device, ["new", "Plan", "--from", "-"], input: Data("x\n".utf8)).status == 0)
        let synced = try docs(device, ["sync"], environment: secret)
        #expect(synced.status == 0, "\(synced.error)")
        let tested = try docs(device, ["remote", "test", "dav"], environment: secret)
        #expect(tested.status == 0, "\(tested.error)")
        for result in [wrong, added, synced, tested] {
            #expect(!result.output.contains(password) && !result.error.contains(password))
        }
        // Of the device's files, only the password file of the tests holds it.
        let enumerator = FileManager.default.enumerator(atPath: device.root.path)
        while let name = enumerator?.nextObject() as? String {
            let file = device.root.appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: file.path) else { continue }
            #expect(!String(decoding: data, as: UTF8.self).contains(password), "\(name)")
        }
    }

    /// `--ca-file`: an https server whose certificate a private authority signed (a home NAS)
    /// is added, probed and synced with that authority's file, kept with the remote, by a user
    /// without root; without it the server is refused, saying to give one; the option is for
    /// the commands that reach a remote only.
    @Test func aServerOfAPrivateAuthorityIsSyncedWithItsCAFile() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let password = try String(
            contentsOfFile: try webDAV("DOCUMENTSYNC_WEBDAV_PASSWORD_FILE"), encoding: .utf8)
        let user = try webDAV("DOCUMENTSYNC_WEBDAV_USER")
        let caFile = try webDAV("DOCUMENTSYNC_WEBDAV_CA_FILE")
        let url = try makeCollection(
            in: try webDAV("DOCUMENTSYNC_WEBDAV_TLS"), user: user, password: password, caFile: caFile)
        let device = try DocsFolder()
        let secret = ["DOCS_PASSWORD": password]
        let untrusted = try docs(device, ["remote", "add", "nas", url, "--user", user], environment: secret)
        // What the server answered is a failure (1), not a mistake on the command line (2):
        // the message says what to do, and the command's help would not.
        #expect(untrusted.status == 1)
        #expect(untrusted.error.contains("--ca-file FILE"), "\(untrusted.error)")
        #expect(!untrusted.error.contains("Try “docs"), "\(untrusted.error)")
        #expect(try listing(device).remotes.isEmpty)

        // Given as a path relative to where docs runs, kept absolute.
        let folder = URL(fileURLWithPath: caFile).deletingLastPathComponent()
        let added = try device.run(
            ["remote", "add", "nas", url, "--user", user, "--ca-file", "ca.pem"],
            environment: secret.merging(["XDG_STATE_HOME": device.root.appendingPathComponent("state").path])
            {
                $1
            },
            in: folder)
        #expect(added.status == 0, "\(added.error)")
        let kept = try docs(device, ["remote", "list", "--json"])
        #expect(kept.output.contains("\"caFile\":\"\(caFile)\""), "\(kept.output)")
        #expect(try docs(device, ["new", "Plan", "--from", "-"], input: Data("private\n".utf8)).status == 0)
        let synced = try docs(device, ["sync"], environment: secret)
        #expect(synced.status == 0, "\(synced.error)")
        #expect(synced.output.contains("1 uploaded"), "\(synced.output)")
        let status = try docs(device, ["status"], environment: secret)
        #expect(status.status == 0, "\(status.error)")

        // A file for a folder remote is a mistake on the command line.
        let folderRemote = try docs(device, ["remote", "add", "disk", remoteURL, "--ca-file", caFile])
        #expect(folderRemote.status == 2)
        #expect(folderRemote.error.contains("is for https:// servers"), "\(folderRemote.error)")
        let misplaced = try docs(device, ["list", "--ca-file", caFile])
        #expect(misplaced.status == 2)
        #expect(misplaced.error.contains("--ca-file is for sync, status, download, share and remote"))
    }
}
