import DocumentKit
import Foundation

/// One item of the container as a scan found it.
struct LocalEntry: Hashable, Sendable {
    var kind: RemoteEntry.Kind
    var status: FileStatus
}

/// The two trees a pass compares: the container's items and the remote's, by path.
enum SyncTrees {
    /// How the names of sync's own temporary files begin, beside the documents they become.
    static let temporaryPrefix = RemotePath.reservedPrefix

    /// Every item of the container below `root`, by path: regular files and folders whose
    /// names are UTF-8 in NFC and not hidden. Links, sockets and the like are not synced.
    ///
    /// - Throws: ``DocumentKitError`` naming the folder that could not be read: a scan that
    ///   misses a folder must never read as its items being deleted.
    ///
    /// - Parameter leftovers: Called with each of sync's own temporary files found (a
    ///   download or a merge a crash left behind).
    /// - Parameter unsyncable: Called with each item whose name sync cannot carry (not
    ///   UTF-8, or not in the NFC form every device and remote agrees on), and why: it is left
    ///   alone, and the pass says so.
    ///
    /// - Parameter expected: About how many items there are (the journal's count), so that
    ///   the table is made once at its size.
    /// - Parameter placeholders: Called with the path of each document kept on the server
    ///   only: the document a placeholder (`.NAME.icloud`) stands for. A folder's placeholders
    ///   are all reported before any of its files is given to `keeping`.
    /// - Parameter keeping: Asked of each file (never a folder) found: one it refuses is left
    ///   out of the tree returned (the caller knows it already). All are kept by default.
    static func local(
        _ root: URL, expected: Int = 0, leftovers: ((URL) -> Void)? = nil,
        placeholders: ((RemotePath) -> Void)? = nil,
        unsyncable: ((URL, String) -> Void)? = nil,
        keeping: ((RemotePath, LocalEntry) -> Bool)? = nil
    ) throws -> [RemotePath: LocalEntry] {
        var found: [RemotePath: LocalEntry] = [:]
        found.reserveCapacity(expected)
        var folders: [(URL, RemotePath)] = [(root, .root)]
        while let (url, path) = folders.popLast() {
            let listed = try DirectoryEntry.entries(
                ofFolderAt: url, followingLinks: false, operation: "list the container for sync"
            ) { entry in
                guard let name = entry.validName else {
                    unsyncable?(url.appendingPathComponent(entry.name), "its name is not UTF-8")
                    return false
                }
                if let leftovers, name.utf8.starts(with: SyncTrees.temporaryPrefix.utf8) {
                    leftovers(url.appendingPathComponent(name))
                    return false
                }
                guard RemotePath.isValidComponent(name), name.utf8.first != UInt8(ascii: ".") else {
                    // A name sync would refuse in a remote's listing is never uploaded either.
                    if name.utf8.first != UInt8(ascii: "."), let problem = RemotePath.problem(withName: name)
                    {
                        unsyncable?(url.appendingPathComponent(name), "its name \(problem)")
                    }
                    if let placeholders,
                        let document = UbiquityPlaceholder.documentName(forPlaceholderName: name),
                        RemotePath.isValidComponent(document)
                    {
                        placeholders(path.appending(document))
                    }
                    return false
                }
                // Bytes, not `==`: Swift's string equality holds for any canonically equal forms.
                guard
                    name.utf8.allSatisfy({ $0 < 0x80 })
                        || name.precomposedStringWithCanonicalMapping.utf8.elementsEqual(name.utf8)
                else {
                    unsyncable?(
                        url.appendingPathComponent(name),
                        "its name is not in Unicode's composed form (NFC); rename it to sync it")
                    return false
                }
                return true
            }
            for (entry, status) in listed {
                let child = path.appending(entry.name)
                if status.isDirectory {
                    found[child] = LocalEntry(kind: .folder, status: status)
                    folders.append((url.appendingPathComponent(entry.name, isDirectory: true), child))
                } else if status.isRegularFile {
                    let entry = LocalEntry(kind: .file, status: status)
                    if keeping?(child, entry) ?? true { found[child] = entry }
                }
            }
        }
        return found
    }

    /// Every item of the remote, by path, without its metadata folder, from one complete
    /// listing of the tree where the remote has one (S3), else of each folder.
    ///
    /// - Parameter unlisted: Called with each folder below the root whose listing failed in a
    ///   way that says nothing of the others (``RemoteError/failsOnlyItsFolder``): the folder
    ///   is in the tree, nothing below it is, and the caller must leave it and everything below
    ///   it as they are (a folder not listed is not a folder emptied). A whole-tree listing
    ///   that fails so is taken again folder by folder, to find the folder. Without it, any
    ///   listing that fails fails the whole.
    /// - Parameter keeping: Asked of each file (never a folder) listed: one it refuses is left
    ///   out of the tree returned (the caller knows it already). All are kept by default.
    /// - Throws: ``RemoteError`` when a listing fails otherwise, or the root's does: a partial
    ///   tree is never returned but for the folders given to `unlisted`.
    static func remote(
        _ remote: any Remote, expected: Int = 0, unlisted: ((RemotePath, RemoteError) -> Void)? = nil,
        keeping: @escaping @Sendable (RemotePath, RemoteEntry) -> Bool = { _, _ in true }
    ) throws -> [RemotePath: RemoteEntry] {
        // A whole-tree listing whose answer cannot be taken: which folder's cannot is found by
        // listing each; if it is the root's, the whole-tree listing's error says it.
        var treeFailure: RemoteError?
        do {
            if let tree = try remote.listTree(keeping: keeping) { return tree }
        } catch let error as RemoteError where unlisted != nil && error.failsOnlyItsFolder {
            treeFailure = error
        }
        var found: [RemotePath: RemoteEntry] = [:]
        found.reserveCapacity(expected)
        var folders: [RemotePath] = [.root]
        while let folder = folders.popLast() {
            let listing: RemoteListing
            do {
                listing = try remote.list(folder)
            } catch let error as RemoteError where error.failsOnlyItsFolder {
                guard !folder.isRoot, let unlisted else { throw treeFailure ?? error }
                unlisted(folder, error)
                continue
            }
            for entry in listing.entries where entry.name.utf8.first != UInt8(ascii: ".") {
                let child = folder.appending(entry.name)
                if entry.kind == .folder {
                    found[child] = entry
                    folders.append(child)
                } else if keeping(child, entry) {
                    found[child] = entry
                }
            }
        }
        return found
    }

    /// Whether `path` is one of `folders` or inside one.
    static func isWithin(_ folders: [RemotePath: RemoteError], _ path: RemotePath) -> Bool {
        guard !folders.isEmpty else { return false }
        var folder = path
        while !folder.isRoot {
            if folders[folder] != nil { return true }
            folder = folder.parent
        }
        return false
    }
}

extension RemoteError {
    /// Whether a listing that failed so fails only the folder listed, not the pass: the remote
    /// answered, and what it said of this folder cannot be taken (a name that is no name or
    /// does not decrypt, a directory reached from two places, an answer cut or malformed), or
    /// the folder its parent listed is gone or a file by the time it is listed. The other
    /// folders' answers stand, and the folder is left as it is until it lists.
    ///
    /// A failure to get an answer (offline, timed out, throttled, a 5xx) or a refusal
    /// (credentials, permission) fails the pass instead: it says the remote cannot be used now,
    /// which the status shows as such, and the next pass tries the whole again.
    var failsOnlyItsFolder: Bool {
        switch category {
        case .badAnswer, .notFound: return true
        case .conflict: return kind == .notAFolder
        case .timedOut, .throttled, .connectionLost, .refused, .failed: return false
        }
    }
}
