import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// What `lstat` says about a node, for assertions on inodes, link counts and modes.
struct NodeInfo {
    var inode: UInt64
    var links: UInt64
    var mode: mode_t
    var isSymbolicLink: Bool

    init(_ url: URL) throws {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { throw Errno(rawValue: errno) }
        inode = UInt64(info.st_ino)
        links = UInt64(info.st_nlink)
        mode = info.st_mode & 0o7777
        isSymbolicLink = (info.st_mode & S_IFMT) == S_IFLNK
    }
}

extension TemporaryTree {
    /// Builds `package/` with files at three levels, the shape most tests use.
    @discardableResult
    func makePackage(_ name: String = "Doc.package") throws -> URL {
        try write("top", to: "\(name)/top.txt")
        try write("middle", to: "\(name)/images/middle.txt")
        try write("deep", to: "\(name)/images/thumbs/deep.txt")
        try write("other deep", to: "\(name)/images/thumbs/other.txt")
        return file(name)
    }
}

/// Whether two file wrapper trees hold the same kinds, keys, contents and destinations.
func sameTree(_ a: FileWrapper, _ b: FileWrapper) -> Bool {
    if a.isRegularFile { return b.isRegularFile && a.regularFileContents == b.regularFileContents }
    if a.isSymbolicLink {
        return b.isSymbolicLink
            && a.symbolicLinkDestinationURL?.relativePath == b.symbolicLinkDestinationURL?.relativePath
    }
    guard let left = a.fileWrappers, let right = b.fileWrappers, Set(left.keys) == Set(right.keys) else {
        return false
    }
    return left.allSatisfy { key, child in sameTree(child, right[key]!) }
}

func text(_ wrapper: FileWrapper?) -> String? {
    wrapper?.regularFileContents.map { String(decoding: $0, as: UTF8.self) }
}

/// Expects `body` to throw a ``DocumentKitError`` with `code` whose description names `url`.
func expectReadError(
    _ code: DocumentKitError.Code, at url: URL, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("expected \(code) for \(url.path)", sourceLocation: sourceLocation)
    } catch let error as DocumentKitError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.url?.path == url.path, sourceLocation: sourceLocation)
        #expect(error.description.contains(url.path), sourceLocation: sourceLocation)
        #expect(error.description.contains("read file wrapper"), sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected DocumentKitError, got \(error)", sourceLocation: sourceLocation)
    }
}
