import DocumentKit
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct StandardDirectoriesTests {
    @Test func defaultsFollowHome() {
        let directories = StandardDirectories(environment: ["HOME": "/home/ada"], userID: 1000)
        #expect(directories.documents.path == "/home/ada/Documents")
        #expect(directories.applicationSupport.path == "/home/ada/.local/share")
        #expect(directories.caches.path == "/home/ada/.cache")
        #expect(directories.configuration.path == "/home/ada/.config")
        #expect(directories.runtime.path == "/tmp/documentkit-runtime-1000")
    }

    @Test func environmentVariablesWin() {
        let directories = StandardDirectories(
            environment: [
                "HOME": "/home/ada", "XDG_DOCUMENTS_DIR": "/data/docs", "XDG_DATA_HOME": "/data/share",
                "XDG_CACHE_HOME": "/fast/cache", "XDG_RUNTIME_DIR": "/run/user/1000",
            ], userID: 1000)
        #expect(directories.documents.path == "/data/docs")
        #expect(directories.applicationSupport.path == "/data/share")
        #expect(directories.caches.path == "/fast/cache")
        #expect(directories.runtime.path == "/run/user/1000")
    }

    @Test func relativeEnvironmentValuesAreIgnored() {
        let directories = StandardDirectories(
            environment: ["HOME": "/home/ada", "XDG_DATA_HOME": "relative/share"], userID: 1000)
        #expect(directories.applicationSupport.path == "/home/ada/.local/share")
    }

    @Test func readsDocumentsFromUserDirsFile() throws {
        let tree = try TemporaryTree()
        try tree.write(
            """
            # This file is written by xdg-user-dirs-update
            XDG_DESKTOP_DIR="$HOME/Desktop"
            XDG_DOCUMENTS_DIR="$HOME/Mes documents"
            """, to: ".config/user-dirs.dirs")
        let directories = StandardDirectories(environment: ["HOME": tree.url.path], userID: 1000)
        #expect(directories.documents.path == tree.url.path + "/Mes documents")
    }

    @Test(arguments: [
        ("XDG_DOCUMENTS_DIR=\"$HOME/Dokumente\"", "/home/ada/Dokumente"),
        ("XDG_DOCUMENTS_DIR=\"/srv/shared docs\"", "/srv/shared docs"),
        ("  XDG_DOCUMENTS_DIR=\"$HOME/With \\\"quotes\\\"\"", "/home/ada/With \"quotes\""),
        ("XDG_DOCUMENTS_DIR=\"$HOME/書類\"", "/home/ada/書類"),
        ("XDG_DOCUMENTS_DIR=\"$HOME/a/../b\"", "/home/ada/b"),
    ])
    func parsesUserDirsLines(line: String, expected: String) {
        let parsed = StandardDirectories.parseUserDirectories(line, home: "/home/ada")
        #expect(parsed["XDG_DOCUMENTS_DIR"] == expected)
    }

    @Test(arguments: [
        "# XDG_DOCUMENTS_DIR=\"$HOME/Commented\"",
        "XDG_DOCUMENTS_DIR=$HOME/Unquoted",
        "XDG_DOCUMENTS_DIR=\"relative/path\"",
        "XDG_DOCUMENTS_DIR=\"$HOME/\"",
        "XDG_DOCUMENTS_DIR=\"$HOME\"",
        "XDG_DOCUMENTS_DIR=\"$HOME/unterminated",
        "XDG_DOCUMENTS_DIR=\"~/Tilde\"",
    ])
    func ignoresInvalidOrDisabledLines(line: String) {
        #expect(StandardDirectories.parseUserDirectories(line, home: "/home/ada")["XDG_DOCUMENTS_DIR"] == nil)
    }

    @Test func disabledDocumentsFallsBackToHomeDocuments() throws {
        let tree = try TemporaryTree()
        try tree.write("XDG_DOCUMENTS_DIR=\"$HOME/\"\n", to: ".config/user-dirs.dirs")
        let directories = StandardDirectories(environment: ["HOME": tree.url.path], userID: 1000)
        #expect(directories.documents.path == tree.url.path + "/Documents")
    }

    @Test func makesPrivateRuntimeDirectory() throws {
        let tree = try TemporaryTree()
        let directories = StandardDirectories(environment: ["HOME": tree.url.path, "TMPDIR": tree.url.path])
        let runtime = try directories.makeRuntimeDirectory()
        var info = stat()
        #expect(lstat(runtime.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(info.st_uid == getuid())
    }

    /// As root with `XDG_RUNTIME_DIR=/tmp`, tightening the folder would lock everyone else
    /// out of `/tmp`.
    @Test(arguments: [0o1777, 0o755] as [mode_t])
    func sharedOrLooseRuntimeFolderKeepsItsModeAndGetsAPrivateFolderInside(mode: mode_t) throws {
        let tree = try TemporaryTree()
        let shared = tree.file("run")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        chmod(shared.path, mode)
        let directories = StandardDirectories(environment: [
            "HOME": tree.url.path, "XDG_RUNTIME_DIR": shared.path,
        ])
        let runtime = try directories.makeRuntimeDirectory()
        #expect(runtime.path == shared.appendingPathComponent("documentkit-runtime-\(getuid())").path)
        #expect(try directories.makeRuntimeDirectory().path == runtime.path)
        var info = stat()
        #expect(lstat(shared.path, &info) == 0)
        #expect(info.st_mode & 0o7777 == mode)
        #expect(lstat(runtime.path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o700)
        #expect(info.st_uid == getuid())
    }

    @Test func privateRuntimeFolderIsUsedAsItIs() throws {
        let tree = try TemporaryTree()
        let runtime = tree.file("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        chmod(runtime.path, 0o700)
        let directories = StandardDirectories(environment: [
            "HOME": tree.url.path, "XDG_RUNTIME_DIR": runtime.path,
        ])
        #expect(try directories.makeRuntimeDirectory().path == runtime.path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime.path).isEmpty)
    }

    @Test func runtimeFolderOthersCanWriteInWithoutTheStickyBitIsRefused() throws {
        let tree = try TemporaryTree()
        let runtime = tree.file("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        chmod(runtime.path, 0o777)
        let directories = StandardDirectories(environment: [
            "HOME": tree.url.path, "XDG_RUNTIME_DIR": runtime.path,
        ])
        let error = try #require(throws: DocumentKitError.self) { try directories.makeRuntimeDirectory() }
        #expect(error.code == .permissionDenied)
        #expect(error.description.contains(runtime.path))
        var info = stat()
        #expect(lstat(runtime.path, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o777)
    }

    @Test func fallbackPlantedByAnotherUserGivesWayToTheNextName() throws {
        guard getuid() == 0 else { return }  // only root can hand a folder to someone else
        let tree = try TemporaryTree()
        chmod(tree.url.path, 0o1777)
        let planted = tree.file("documentkit-runtime-0")
        try FileManager.default.createDirectory(at: planted, withIntermediateDirectories: true)
        chmod(planted.path, 0o700)
        chown(planted.path, 65534, 65534)
        // A link where the next name would be is passed over too, not followed.
        try FileManager.default.createDirectory(at: tree.file("elsewhere"), withIntermediateDirectories: true)
        chmod(tree.file("elsewhere").path, 0o700)
        try FileManager.default.createSymbolicLink(
            atPath: tree.file("documentkit-runtime-0.1").path, withDestinationPath: "elsewhere")
        let environment = ["HOME": tree.url.path, "TMPDIR": tree.url.path]

        let runtime = try StandardDirectories(environment: environment, userID: 0).makeRuntimeDirectory()
        #expect(runtime.path == tree.file("documentkit-runtime-0.2").path)
        // Every process of the user finds the same one.
        #expect(
            try StandardDirectories(environment: environment, userID: 0).makeRuntimeDirectory().path
                == runtime.path)
        var info = stat()
        #expect(lstat(runtime.path, &info) == 0 && info.st_mode & 0o7777 == 0o700 && info.st_uid == 0)
        #expect(lstat(planted.path, &info) == 0 && info.st_mode & 0o7777 == 0o700 && info.st_uid == 65534)
        // The plant removed, the folder already made stays the one every process uses.
        try FileManager.default.removeItem(at: planted)
        #expect(
            try StandardDirectories(environment: environment, userID: 0).makeRuntimeDirectory().path
                == runtime.path)
    }

    @Test func everyFallbackNameTakenIsRefusedNamingTheFolder() throws {
        guard getuid() == 0 else { return }
        let tree = try TemporaryTree()
        for name in ["documentkit-runtime-0"] + (1..<8).map({ "documentkit-runtime-0.\($0)" }) {
            try FileManager.default.createDirectory(at: tree.file(name), withIntermediateDirectories: true)
            chown(tree.file(name).path, 65534, 65534)
        }
        let directories = StandardDirectories(
            environment: ["HOME": tree.url.path, "TMPDIR": tree.url.path], userID: 0)
        let error = try #require(throws: DocumentKitError.self) { try directories.makeRuntimeDirectory() }
        #expect(error.code == .permissionDenied)
        #expect(error.description.contains(tree.file("documentkit-runtime-0").path), "\(error)")
    }

    @Test func refusesRuntimeDirectoryThatIsALink() throws {
        let tree = try TemporaryTree()
        try FileManager.default.createDirectory(at: tree.file("elsewhere"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: tree.file("run").path, withDestinationPath: "elsewhere")
        let directories = StandardDirectories(environment: [
            "HOME": tree.url.path, "XDG_RUNTIME_DIR": tree.file("run").path,
        ])
        let error = try #require(throws: DocumentKitError.self) { try directories.makeRuntimeDirectory() }
        #expect(error.code == .wrongFileType)
        #expect(error.description.contains(tree.file("run").path))
    }

    @Test func refusesRuntimeDirectoryOfAnotherUser() throws {
        let tree = try TemporaryTree()
        let runtime = tree.file("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        chmod(runtime.path, 0o700)
        chown(runtime.path, 65534, 65534)
        guard getuid() == 0 else { return }  // only root can hand a folder to someone else
        let directories = StandardDirectories(environment: [
            "HOME": tree.url.path, "XDG_RUNTIME_DIR": runtime.path,
        ])
        let error = try #require(throws: DocumentKitError.self) { try directories.makeRuntimeDirectory() }
        #expect(error.code == .permissionDenied)
    }
}
