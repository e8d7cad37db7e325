import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

#if canImport(Glibc)
    import Glibc
#endif

/// Private documents stay private through sync: a download, a merge or a conflict replacing a
/// 0600 document leaves a 0600 file; a new document takes the container's default (nothing for
/// group and others in a private container); what sync sets aside and its temporary files are
/// 0600 in 0700 folders. Checked as another user reads (`setpriv` to `nobody`, as root), and by
/// the modes.
@Suite struct SyncPrivacyTests {
    let folder: TemporaryFolder
    let a: SyncDevice
    let b: SyncDevice
    let mask: mode_t

    init() throws {
        folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        a = try SyncDevice("a", remote: remote, in: folder)
        b = try SyncDevice("b", remote: remote, in: folder)
        // Every folder on the way open to others, so that only the modes sync sets keep them out.
        for url in [folder.url, folder.file("a"), folder.file("b"), a.container, b.container] {
            #expect(chmod(url.path, 0o755) == 0)
        }
        mask = umask(0o022)
        umask(mask)
    }

    /// Whether `nobody` reads the file: `setpriv --reuid=nobody --regid=nogroup --clear-groups cat FILE`.
    static func anotherUserReads(_ url: URL) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "cat", url.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// `url` is a file with exactly `mode`, and, as root, another user cannot read it though
    /// they can read `control` (a file open to all beside it: the check can tell).
    func expectPrivate(
        _ url: URL, mode: mode_t = 0o600, control: URL, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let status = try #require(FileStatus(path: url.path), sourceLocation: sourceLocation)
        #expect(
            status.permissions == mode, "\(url.lastPathComponent): \(String(status.permissions, radix: 8))",
            sourceLocation: sourceLocation)
        guard getuid() == 0 else { return }
        #expect(
            try Self.anotherUserReads(control), "the check cannot tell: \(control.path)",
            sourceLocation: sourceLocation)
        #expect(
            try !Self.anotherUserReads(url), "\(url.path) is readable by nobody",
            sourceLocation: sourceLocation)
    }

    /// A file open to all in `folder`, for ``expectPrivate(_:mode:control:sourceLocation:)``.
    func control(in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("control-\(UUID().uuidString.prefix(4))")
        try Data("open".utf8).write(to: url)
        #expect(chmod(url.path, 0o644) == 0)
        return url
    }

    @Test func aDownloadAMergeAndAConflictReplacingAPrivateDocumentLeaveItPrivate() throws {
        try a.write("secret.txt", "one\ntwo\nthree\nfour\nfive\n")
        try a.write("open.txt", "open\n")
        try a.sync()
        try b.sync()
        // The user of b makes the document private; a's edit comes down.
        #expect(chmod(b.url("secret.txt").path, 0o600) == 0)
        try b.sync()
        try a.write("secret.txt", "ONE\ntwo\nthree\nfour\nfive\n")
        try a.sync()
        #expect(try b.sync().downloaded == 1)
        #expect(b.read("secret.txt") == "ONE\ntwo\nthree\nfour\nfive\n")
        let control = try control(in: b.container)
        try expectPrivate(b.url("secret.txt"), control: control)
        // A new document in an open container is as open as the container makes it.
        #expect(FileStatus(path: b.url("open.txt").path)?.permissions == 0o644 & ~mask)

        // Edits of different lines on both sides: merged, still private.
        try a.write("secret.txt", "ONE\ntwo\nthree\nfour\nFIVE\n")
        try a.sync()
        try Data("ONE\nTWO\nthree\nfour\nfive\n".utf8).write(to: b.url("secret.txt"))
        let merging = try b.sync()
        #expect(merging.merged == 1, "\(merging)")
        #expect(b.read("secret.txt") == "ONE\nTWO\nthree\nfour\nFIVE\n")
        try expectPrivate(b.url("secret.txt"), control: control)

        // The same line on both sides: a conflict, the remote's text in place, still private.
        try a.sync()
        try a.write("secret.txt", "mine on a\n")
        try a.sync()
        try Data("mine on b\n".utf8).write(to: b.url("secret.txt"))
        #expect(try b.sync().conflicts == 1)
        #expect(b.read("secret.txt") == "mine on a\n")
        try expectPrivate(b.url("secret.txt"), control: control)
    }

    @Test func aNewDocumentInAPrivateContainerIsPrivate() throws {
        // 0711: others may pass through (to show they cannot read), not list; 0700 below.
        #expect(chmod(b.container.path, 0o711) == 0)
        try a.write("new.txt", "new\n")
        try a.write("Sub/inner.txt", "inner\n")
        try a.sync()
        try b.sync()
        #expect(b.read("Sub/inner.txt") == "inner\n")
        let control = try control(in: b.container)
        try expectPrivate(b.url("new.txt"), control: control)
        #expect(FileStatus(path: b.url("Sub").path)?.permissions == 0o711 & ~mask)
        try expectPrivate(b.url("Sub/inner.txt"), control: try self.control(in: b.url("Sub")))

        // A container only its user may enter: files 0600 and folders 0700, whatever the umask.
        #expect(chmod(b.container.path, 0o700) == 0)
        try a.write("Other/third.txt", "third\n")
        try a.sync()
        try b.sync()
        #expect(FileStatus(path: b.url("Other").path)?.permissions == 0o700)
        #expect(FileStatus(path: b.url("Other/third.txt").path)?.permissions == 0o600)
    }

    @Test func whatSyncSetsAsideIsPrivate() throws {
        try a.write("one.txt", "first\n")
        try a.write("two.txt", "second\n")
        try a.sync()
        try b.sync()
        // A Deleted folder an older version made open to all is made private too.
        try FileManager.default.createDirectory(at: b.deleted, withIntermediateDirectories: true)
        #expect(chmod(b.deleted.path, 0o755) == 0)
        let control = try control(in: folder.file("b"))
        try a.delete("one.txt")
        try a.sync()
        #expect(try b.sync().deletedLocally == 1)
        #expect(FileStatus(path: b.deleted.path)?.permissions == 0o700)
        try expectPrivate(b.deleted.appendingPathComponent("one.txt"), control: control)

        // A download a crash cut short leaves its temporary file: private too.
        try a.write("two.txt", "second, edited\n")
        try a.sync()
        try b.crashPass(at: .beforeLocalWrite)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: b.container.path)
            .filter { $0.hasPrefix(SyncTrees.temporaryPrefix) }
        #expect(leftovers.count == 1)
        for name in leftovers {
            try expectPrivate(
                b.container.appendingPathComponent(name), control: try self.control(in: b.container))
        }
        try b.sync()
        #expect(b.read("two.txt") == "second, edited\n")
    }
}
