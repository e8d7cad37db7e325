import Foundation

extension CanonicalPath {
    /// The path of the folder at `path` with every symbolic link resolved, the last component
    /// too, and `..` taken as the kernel takes it (after the link before it), as `realpath(3)`
    /// gives it; ``of(path:)`` where the folder does not exist.
    package static func resolved(_ path: String) -> String {
        if case .success(let resolved) = Syscall.realPath(path) { return resolved }
        return of(path: path)
    }

    /// Whether the folders at `first` and `second` are one folder, or one holds the other,
    /// however each is spelled or reached: through symbolic links at any level, `..` after a
    /// link, or another mount of the same folder (a bind mount).
    ///
    /// Compares the resolved paths, then the identity (device and inode) of each folder with
    /// the identity of the other and of every folder above the other, both ways: a folder
    /// reached through an alias is still the same inode. What neither path nor identities
    /// can show is a mount of one folder somewhere inside the other.
    ///
    /// For example:
    ///
    /// ```swift
    /// // /tmp/link -> /home/ana/Documents
    /// CanonicalPath.foldersOverlap("/tmp/link", "/home/ana/Documents/Notes")  // true
    /// ```
    package static func foldersOverlap(_ first: String, _ second: String) -> Bool {
        let (a, b) = (resolved(first), resolved(second))
        if a == b || isAncestor(a, of: b) || isAncestor(b, of: a) { return true }
        let (chainA, chainB) = (identities(ofFolderAndAncestors: a), identities(ofFolderAndAncestors: b))
        if let folder = chainA.first, chainB.contains(folder) { return true }
        if let folder = chainB.first, chainA.contains(folder) { return true }
        return false
    }

    /// The device and inode of the folder at `path` (resolved) and of each folder above it,
    /// nearest first; empty when the folder cannot be looked at.
    private static func identities(ofFolderAndAncestors path: String) -> [FolderIdentity] {
        guard let folder = FileStatus(path: path) else { return [] }
        var chain = [FolderIdentity(folder)]
        for ancestor in ancestors(of: path) {
            guard let status = FileStatus(path: ancestor) else { continue }
            chain.append(FolderIdentity(status))
        }
        return chain
    }

    private struct FolderIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        init(_ status: FileStatus) {
            device = status.device
            inode = status.inode
        }
    }
}
