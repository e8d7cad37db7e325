import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `docs` when the runtime folder for coordination is not what it should be. These plant
/// folders owned by `nobody`, so they check something only as root.
@Suite("docs: the runtime folder")
struct DocsRuntimeFolderTests {
    /// `folder`'s environment with `XDG_RUNTIME_DIR` unset, so that the fallback in
    /// `temporary` is used.
    static func environment(_ folder: DocsFolder, temporary: URL) -> [String: String] {
        var environment = folder.environment
        environment.removeValue(forKey: "XDG_RUNTIME_DIR")
        environment["TMPDIR"] = temporary.path
        return environment
    }

    static func makeFolder(_ url: URL, mode: mode_t, owner: uid_t) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        chmod(url.path, mode)
        guard chown(url.path, owner, owner) == 0 else { throw CocoaError(.fileWriteNoPermission) }
    }

    @Test func fallbackPlantedByAnotherUserDoesNotStopShowOrNew() throws {
        guard getuid() == 0 else { return }
        let folder = try DocsFolder()
        let temporary = folder.root.appendingPathComponent("tmp", isDirectory: true)
        try Self.makeFolder(temporary, mode: 0o1777, owner: 0)
        let planted = temporary.appendingPathComponent("documentkit-runtime-0")
        try Self.makeFolder(planted, mode: 0o700, owner: 65534)
        try folder.write("Notes.txt", "planted around\n")
        let environment = Self.environment(folder, temporary: temporary)

        let shown = try runDocs(
            DocsBinary.url, ["show", "Notes"], environment: environment, input: nil, scratch: folder.root)
        #expect(shown.status == 0, "\(shown.error)")
        #expect(shown.output == "planted around\n")
        #expect(shown.error.isEmpty, "\(shown.error)")
        // Coordinated writes work too: the next name is this user's private folder.
        let created = try runDocs(
            DocsBinary.url, ["new", "Other"], environment: environment, input: nil, scratch: folder.root)
        #expect(created.status == 0, "\(created.error)")
        #expect(folder.exists("Other.txt"))

        var info = stat()
        #expect(lstat(planted.path, &info) == 0)
        #expect(info.st_uid == 65534 && info.st_mode & 0o7777 == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: planted.path).isEmpty)
        let own = temporary.appendingPathComponent("documentkit-runtime-0.1")
        #expect(lstat(own.path, &info) == 0)
        #expect(info.st_uid == 0 && info.st_mode & 0o7777 == 0o700)
    }

    @Test func showReadsWithoutCoordinationWhenNoPrivateRuntimeFolderCanBeHad() throws {
        guard getuid() == 0 else { return }
        let folder = try DocsFolder()
        let theirs = folder.root.appendingPathComponent("their-runtime", isDirectory: true)
        try Self.makeFolder(theirs, mode: 0o700, owner: 65534)
        try folder.write("Notes.txt", "still readable\n")
        let environment = ["XDG_RUNTIME_DIR": theirs.path]

        let shown = try folder.run(["show", "Notes"], environment: environment)
        #expect(shown.status == 0, "\(shown.error)")
        #expect(shown.output == "still readable\n")
        let warnings = shown.error.split(separator: "\n")
        #expect(warnings.count == 1, "\(shown.error)")
        #expect(shown.error.hasPrefix("DocumentKit: warning: reading without file coordination"))
        #expect(shown.error.contains(theirs.path), "\(shown.error)")
        #expect(shown.error.contains("the runtime folder belongs to another user"), "\(shown.error)")

        // A write could undo another writer's change: it fails, saying why, and makes nothing.
        let created = try folder.run(["new", "Other"], environment: environment)
        #expect(created.status == 1)
        #expect(created.error.contains(theirs.path), "\(created.error)")
        #expect(!folder.exists("Other.txt"))
        var info = stat()
        #expect(lstat(theirs.path, &info) == 0 && info.st_uid == 65534 && info.st_mode & 0o7777 == 0o700)
    }
}
