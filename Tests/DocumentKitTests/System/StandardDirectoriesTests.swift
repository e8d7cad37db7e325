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

    @Test func tightensLooseRuntimeDirectoryMode() throws {
        let tree = try TemporaryTree()
        let runtime = tree.file("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        chmod(runtime.path, 0o755)
        let directories = StandardDirectories(environment: [
            "HOME": tree.url.path, "XDG_RUNTIME_DIR": runtime.path,
        ])
        try directories.makeRuntimeDirectory()
        var info = stat()
        #expect(lstat(runtime.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
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
