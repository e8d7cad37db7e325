import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct FileStatusTests {
    /// What `stat(1)` prints for `path`: device, inode, size, mode (hex), links, and the
    /// modification, status-change and birth times to the nanosecond.
    private func statCommand(_ path: String, followingLinks: Bool = false) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/stat")
        process.arguments = (followingLinks ? ["-L"] : []) + ["-c", "%d %i %s %f %h %.9Y %.9Z %.9W", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: " ").map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    private func text(_ time: FileStatus.Timestamp) -> String {
        "\(time.seconds)." + String(format: "%09u", time.nanoseconds)
    }

    /// The status of `url` after its times are set far in the past and a moment has passed:
    /// file systems stamp times from a coarse clock, and a change made next must differ.
    private func agedStatus(of url: URL) throws -> FileStatus {
        var times = [
            timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0),
        ]
        #expect(utimensat(AT_FDCWD, url.path, &times, 0) == 0)
        let status = try #require(FileStatus(path: url.path))
        usleep(20_000)
        return status
    }

    @Test func saysWhatStatSays() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("twelve bytes", to: "a.txt")
        let status = try #require(FileStatus(path: url.path))
        let fields = try statCommand(url.path)
        #expect(String(status.device) == fields[0])
        #expect(String(status.inode) == fields[1])
        #expect(String(status.size) == fields[2])
        #expect(String(status.mode, radix: 16) == fields[3])
        #expect(String(status.linkCount) == fields[4])
        #expect(text(status.modification) == fields[5])
        #expect(text(status.statusChange) == fields[6])
        if let birth = status.birth { #expect(text(birth) == fields[7]) }
        #expect(status.isRegularFile && !status.isDirectory && !status.isSymbolicLink)
        #expect(status.permissions == mode_t(status.mode & 0o7777))
    }

    @Test func theOpenDescriptorAndTheFolderAndNameSayTheSame() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("x", to: "a.txt")
        let byPath = try Syscall.fileStatus(atPath: url.path).get()
        let file = try FileDescriptor.open(url, O_RDONLY, operation: "test")
        let byDescriptor = try Syscall.fileStatus(of: file.rawValue).get()
        let folder = try FileDescriptor.openDirectory(tree.url, operation: "test")
        let byName = try Syscall.fileStatus(folder.rawValue, "a.txt", followingLinks: false).get()
        #expect(byPath == byDescriptor)
        #expect(byPath == byName)
        #expect(byPath.birth == byName.birth)
        #expect(FileStatus(try file.stat(operation: "test")) == byPath)
    }

    @Test func keepsDeviceAndInodeAcrossARename() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("contents", to: "before.txt")
        let before = try #require(FileStatus(path: url.path))
        let moved = tree.file("after.txt")
        #expect(rename(url.path, moved.path) == 0)
        let after = try #require(FileStatus(path: moved.path))
        #expect(after.device == before.device && after.inode == before.inode)
        #expect(after.isSameFileAndContents(as: before))
        #expect(FileStatus(path: url.path) == nil)
    }

    @Test func aWriteChangesSizeAndTimes() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("short", to: "a.txt")
        let before = try agedStatus(of: url)
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(" and longer".utf8))
        try handle.close()
        let after = try #require(FileStatus(path: url.path))
        #expect(after.inode == before.inode)
        #expect(after.size == before.size + 11)
        #expect(after.modification > before.modification)
        #expect(after.statusChange > before.statusChange)
        #expect(after != before)
        #expect(!after.isSameFileAndContents(as: before))
    }

    @Test func aChmodChangesOnlyTheStatusChangeTime() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("x", to: "a.txt")
        let before = try agedStatus(of: url)
        #expect(chmod(url.path, 0o600) == 0)
        let after = try #require(FileStatus(path: url.path))
        #expect(after.isSameFileAndContents(as: before))
        #expect(after != before)
        #expect(after.permissions == 0o600)
    }

    @Test func aSymbolicLinkIsNotFollowedWhenAsked() throws {
        let tree = try TemporaryTree()
        let target = try tree.write("target", to: "target.txt")
        let link = tree.file("link")
        #expect(symlink("target.txt", link.path) == 0)
        let own = try #require(FileStatus(path: link.path, followingLinks: false))
        let followed = try #require(FileStatus(path: link.path))
        let targetStatus = try #require(FileStatus(path: target.path))
        #expect(own.isSymbolicLink)
        #expect(String(own.inode) == (try statCommand(link.path))[1])
        #expect(own.inode != targetStatus.inode)
        #expect(followed.isRegularFile)
        #expect(followed == targetStatus)
        #expect(String(followed.inode) == (try statCommand(link.path, followingLinks: true))[1])
        // A link to nothing has a status of its own and none through it.
        #expect(unlink(target.path) == 0)
        #expect(FileStatus(path: link.path, followingLinks: false) != nil)
        #expect(FileStatus(path: link.path) == nil)
        #expect(throws: Errno.noSuchFileOrDirectory) { try Syscall.fileStatus(atPath: link.path).get() }
    }
}

@Suite struct DirectoryEntryTests {
    @Test func listsNamesWithoutDotAndDotDot() throws {
        let tree = try TemporaryTree()
        try tree.write("a", to: "a.txt")
        try tree.write("b", to: ".hidden")
        try tree.write("c", to: "sub/c.txt")
        #expect(symlink("a.txt", tree.file("link").path) == 0)
        let entries = try DirectoryEntry.entries(ofFolderAt: tree.url)
        #expect(Set(entries.map(\.name)) == ["a.txt", ".hidden", "sub", "link"])
        // Kinds as the folder says them, where the file system says (ext4, tmpfs do).
        for entry in entries where entry.kind != nil {
            let expected: DirectoryEntry.Kind =
                entry.name == "sub" ? .directory : entry.name == "link" ? .symbolicLink : .regularFile
            #expect(entry.kind == expected, "\(entry.name)")
        }
        let empty = tree.file("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
        #expect(try DirectoryEntry.entries(ofFolderAt: empty).isEmpty)
    }

    @Test func listsNamesThatAreNotUTF8() throws {
        let tree = try TemporaryTree()
        let name: [UInt8] = [0x6E, 0xFF, 0x2E, 0x74, 0x78, 0x74]  // "n\xFF.txt"
        let folder = try FileDescriptor.openDirectory(tree.url, operation: "test")
        let fd = try Syscall.withCString(name) {
            Syscall.openat(folder.rawValue, $0, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        }.get()
        Syscall.close(fd)
        let entries = try Syscall.directoryEntries(in: folder.rawValue).get()
        #expect(entries.map(\.fileSystemName) == [name])
        #expect(entries.first?.validName == nil)
    }

    @Test func listsWithStatusesFollowingLinksWhenAsked() throws {
        let tree = try TemporaryTree()
        try tree.write("twelve bytes", to: "a.txt")
        #expect(symlink("a.txt", tree.file("link").path) == 0)
        let followed = try DirectoryEntry.entries(ofFolderAt: tree.url, followingLinks: true) { _ in true }
        #expect(followed.allSatisfy { $0.status.isRegularFile && $0.status.size == 12 })
        let own = try DirectoryEntry.entries(ofFolderAt: tree.url, followingLinks: false) {
            $0.name == "link"
        }
        #expect(own.map(\.entry.name) == ["link"])
        #expect(own.first?.status.isSymbolicLink == true)
    }

    @Test func aFolderThatCannotBeListedGivesAnErrorNamingIt() throws {
        let tree = try TemporaryTree()
        let missing = tree.file("missing")
        let error = try #require(throws: DocumentKitError.self) {
            try DirectoryEntry.entries(ofFolderAt: missing, operation: "list the test folder")
        }
        #expect(error.errno == .noSuchFileOrDirectory)
        #expect(error.url?.path == missing.path)
        #expect("\(error)".contains(missing.path))
        let file = try tree.write("x", to: "file")
        let notFolder = try #require(throws: DocumentKitError.self) {
            try DirectoryEntry.entries(ofFolderAt: file)
        }
        #expect(notFolder.errno == .notDirectory)
        #expect(notFolder.url?.path == file.path)
    }

    @Test(.enabled(if: getuid() != 0, "root reads a folder whatever its mode"))
    func anUnreadableFolderGivesAnErrorNamingIt() throws {
        let tree = try TemporaryTree()
        let locked = tree.file("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
        #expect(chmod(locked.path, 0o000) == 0)
        let error = try #require(throws: DocumentKitError.self) {
            try DirectoryEntry.entries(ofFolderAt: locked)
        }
        #expect(error.errno == .permissionDenied)
        #expect("\(error)".contains(locked.path))
    }
}
