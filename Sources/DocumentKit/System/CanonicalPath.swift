import CDocumentSystem
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Canonical paths: one spelling per item, so that two URLs of one file coordinate together.
package enum CanonicalPath {
    /// The one spelling every process uses for the item at `url`: see ``of(path:)``.
    package static func of(_ url: URL) -> String {
        of(path: url.path)
    }

    package static func isAncestor(_ ancestor: String, of path: String) -> Bool {
        let a = ancestor.utf8
        let p = path.utf8
        guard p.count > a.count, p.starts(with: a) else { return false }
        if ancestor == "/" { return true }
        return p[p.index(p.startIndex, offsetBy: a.count)] == UInt8(ascii: "/")
    }

    /// The folders that contain `path`, nearest first, ending with "/".
    static func ancestors(of path: String) -> [String] {
        var result: [String] = []
        var current = path
        while current != "/" && !current.isEmpty {
            current = (current as NSString).deletingLastPathComponent
            result.append(current.isEmpty ? "/" : current)
        }
        return result
    }

    /// The one spelling of `path` that every process uses: to name its lock, to find its
    /// presenters, to key its history.
    ///
    /// The path is made absolute and `.` components dropped; then the folders above the
    /// last component are resolved through symbolic links as far as they exist, and the
    /// rest is appended as written (an item about to be created, in a folder about to be
    /// created, still gets one stable name). The last component itself is not followed:
    /// coordinating on a link coordinates on the link, as moving or deleting it would.
    ///
    /// - Parameter path: An absolute or current-folder-relative path.
    /// - Returns: An absolute path without `.`, `..`, repeated slashes or links above its
    ///   last component.
    static func of(path: String) -> String {
        if let plain = plainCanonicalPath(path) { return plain }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let components = absolute.split(separator: "/").filter { $0 != "." }
        guard let last = components.last else { return "/" }
        if last == ".." { return resolvingExisting(components[...]) }
        return appending(last, to: resolvingExisting(components.dropLast()))
    }

    /// Whether openat2(2) works here; once it has answered ENOSYS or EPERM (an old kernel,
    /// a seccomp filter), it is not asked again.
    private static let openat2Works = Atomic<Bool>(true)

    /// `path` itself, when it is already canonical: absolute, spelled plainly (no `.`, `..`
    /// or empty components, no trailing slash), and its folder reached without following a
    /// symbolic link, which one `openat2` with `RESOLVE_NO_SYMLINKS` tells. The kernel then
    /// walked exactly the names written, so the name `/proc/self/fd` or `realpath(3)` would
    /// give the folder is the one written, and nothing needs building. `nil` otherwise, and
    /// the general resolution runs.
    private static func plainCanonicalPath(_ path: String) -> String? {
        let slash = UInt8(ascii: "/")
        let dot = UInt8(ascii: ".")
        let bytes = path.utf8
        guard bytes.first == slash, bytes.count > 1 else { return nil }
        // One pass: the offset of the last slash, and whether every component is plain.
        var lastSlash = 0
        var componentLength = 0
        var componentIsDots = true
        var offset = 0
        for byte in bytes {
            if byte == slash {
                if offset > 0 {
                    guard componentLength > 0, !(componentIsDots && componentLength <= 2) else { return nil }
                }
                lastSlash = offset
                componentLength = 0
                componentIsDots = true
            } else {
                componentLength += 1
                componentIsDots = componentIsDots && byte == dot
            }
            offset += 1
        }
        guard componentLength > 0, !(componentIsDots && componentLength <= 2) else { return nil }
        if lastSlash == 0 { return path }  // an item in the root folder
        guard lastSlash < Int(PATH_MAX), openat2Works.load(ordering: .relaxed) else { return nil }
        let folderIsPlain = withUnsafeTemporaryAllocation(of: CChar.self, capacity: lastSlash + 1) { folder in
            var index = 0
            for byte in bytes.prefix(lastSlash) {
                folder[index] = CChar(bitPattern: byte)
                index += 1
            }
            folder[lastSlash] = 0
            let fd = cds_open_folder_without_links(folder.baseAddress!)
            guard fd >= 0 else {
                if errno == ENOSYS || errno == EPERM { openat2Works.store(false, ordering: .relaxed) }
                return false
            }
            close(fd)
            return true
        }
        return folderIsPlain ? path : nil
    }

    /// The real path of the longest existing prefix of `components`, with the rest
    /// appended lexically.
    private static func resolvingExisting(_ components: ArraySlice<Substring>) -> String {
        guard let last = components.last else { return "/" }
        let path = "/" + components.joined(separator: "/")
        if let resolved = resolvedFolder(path) { return resolved }
        if case .success(let resolved) = Syscall.realPath(path) { return resolved }
        let parent = resolvingExisting(components.dropLast())
        if last == ".." {
            return parent == "/" ? "/" : String(parent[..<parent.lastIndex(of: "/")!]).nonEmptyOrRoot
        }
        return appending(last, to: parent)
    }

    /// The real path of an existing folder, as the kernel names it: one `open`, one
    /// `readlink` of its `/proc/self/fd` entry and one `close`, where `realpath(3)` walks
    /// every component with `lstat` and `readlink`. `nil` when `path` is not an existing
    /// folder or `/proc` is not mounted, and the caller falls back to `realpath`.
    private static func resolvedFolder(_ path: String) -> String? {
        guard case .success(let fd) = Syscall.openat(AT_FDCWD, path, CDS_O_PATH | O_DIRECTORY) else {
            return nil
        }
        defer { Syscall.close(fd) }
        guard case .success(let resolved) = Syscall.readlinkat(AT_FDCWD, "/proc/self/fd/\(fd)"),
            resolved.hasPrefix("/")
        else { return nil }
        // A folder removed while open is named "... (deleted)": not a path to lock by.
        return resolved.hasSuffix(" (deleted)") ? nil : resolved
    }

    private static func appending(_ component: Substring, to folder: String) -> String {
        folder == "/" ? "/" + component : folder + "/" + component
    }
}

extension String {
    fileprivate var nonEmptyOrRoot: String { isEmpty ? "/" : self }
}
