import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct FileWrapperBadInputTests {
    /// Binds a real Unix-domain socket at `url`; the returned descriptor keeps it listening.
    static func bindSocket(at url: URL) throws -> CInt {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Errno(rawValue: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(url.path.utf8CString)
        precondition(path.count <= MemoryLayout.size(ofValue: address.sun_path), "socket path too long")
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            path.withUnsafeBytes { raw.copyMemory(from: $0) }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let error = Errno(rawValue: errno)
            close(fd)
            throw error
        }
        return fd
    }

    @Test func missingPathIsFileNotFound() throws {
        let tree = try TemporaryTree()
        let url = tree.file("absent.package")
        expectReadError(.fileNotFound, at: url) { _ = try FileWrapper(url: url) }
    }

    @Test func socketIsUnsupportedFileType() throws {
        // sun_path holds 108 bytes: keep the path short.
        let directory = URL(fileURLWithPath: "/tmp/dkfw-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("s")
        let fd = try Self.bindSocket(at: url)
        defer { close(fd) }
        expectReadError(.unsupportedFileType, at: url) { _ = try FileWrapper(url: url) }
        // Inside a package the child's path is named.
        try Data("x".utf8).write(to: directory.appendingPathComponent("x"))
        expectReadError(.unsupportedFileType, at: url) { _ = try FileWrapper(url: directory) }
    }

    @Test func fifoIsUnsupportedFileTypeAndDoesNotBlock() throws {
        let tree = try TemporaryTree()
        let url = tree.file("pipe")
        #expect(mkfifo(url.path, 0o644) == 0)
        // With no writer, a blocking open would hang here forever.
        expectReadError(.unsupportedFileType, at: url) { _ = try FileWrapper(url: url) }

        try tree.write("x", to: "P.package/x")
        let child = tree.file("P.package/pipe")
        #expect(mkfifo(child.path, 0o644) == 0)
        expectReadError(.unsupportedFileType, at: child) { _ = try FileWrapper(url: tree.file("P.package")) }
    }

    @Test func missingFolderOnTheWayIsFileNotFound() throws {
        // Only the node at the URL may be a link read as one: a link on the way that leads
        // nowhere leaves nothing at the URL.
        let tree = try TemporaryTree()
        try FileManager.default.createSymbolicLink(
            atPath: tree.file("gone").path, withDestinationPath: "nowhere")
        let url = tree.file("gone/child.txt")
        expectReadError(.fileNotFound, at: url) { _ = try FileWrapper(url: url) }
    }

    @Test func loopOnTheWayIsInvalidSymbolicLink() throws {
        let tree = try TemporaryTree()
        try FileManager.default.createSymbolicLink(
            atPath: tree.file("loop").path, withDestinationPath: "loop")
        let url = tree.file("loop/child.txt")
        expectReadError(.invalidSymbolicLink, at: url) { _ = try FileWrapper(url: url) }
    }

    @Test func rootLinkToPackageIsFollowed() throws {
        let tree = try TemporaryTree()
        try tree.makePackage()
        let link = tree.file("Alias.package")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "Doc.package")
        let wrapper = try FileWrapper(url: link)
        #expect(wrapper.isDirectory)
        #expect(wrapper.filename == "Alias.package")
    }

    @Test func failedRereadLeavesWrapperAsItWas() throws {
        let tree = try TemporaryTree()
        let url = try tree.makePackage()
        let wrapper = try FileWrapper(url: url)
        expectReadError(.fileNotFound, at: tree.file("gone")) { try wrapper.read(from: tree.file("gone")) }
        #expect(text(wrapper.fileWrappers?["top.txt"]) == "top")
        #expect(wrapper.filename == "Doc.package")
    }

    @Test func unreadableFileIsPermissionDenied() throws {
        let tree = try TemporaryTree()
        let url = try tree.write("private", to: "P.package/private.txt")
        #expect(chmod(url.path, 0) == 0)
        if getuid() != 0 {
            expectReadError(.permissionDenied, at: url) { _ = try FileWrapper(url: tree.file("P.package")) }
            return
        }
        // Root reads files whatever their mode, so the read runs as nobody in a child process.
        #expect(chmod(tree.url.path, 0o755) == 0)
        #expect(chmod(tree.file("P.package").path, 0o755) == 0)
        let outcome = try TestChild.run(["as-nobody", "read-wrapper", tree.file("P.package").path])
        #expect(outcome.status == 1)
        #expect(outcome.standardError.contains("Permission denied"))
        #expect(outcome.standardError.contains(url.path))
        #expect(try String(contentsOf: url, encoding: .utf8) == "private")
    }

    @Test func directoryPassedAsOriginalThatIsMissingStillWritesEverything() throws {
        let tree = try TemporaryTree()
        let package = FileWrapper(directoryWithFileWrappers: [:])
        package.addRegularFile(withContents: Data("a".utf8), preferredFilename: "a")
        let url = tree.file("New.package")
        try package.write(to: url, options: .atomic, originalContentsURL: tree.file("missing.package"))
        #expect(try String(contentsOf: url.appendingPathComponent("a"), encoding: .utf8) == "a")
    }
}
