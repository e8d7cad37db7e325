import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A folder of a program's own that only its user may enter: where it keeps what it takes out
/// of the user's way (deleted documents a sync set aside), which may be as private as the
/// documents were.
///
/// The rule: the folder is 0700, whatever the umask; the folders above it that it makes are
/// 0700 too; and a folder already there that others could enter is made 0700 before anything
/// goes in.
///
/// For example:
///
/// ```swift
/// let deleted = try PrivateFolder.open(at: deletedFolder, operation: "set aside the deleted document")
/// ```
package enum PrivateFolder {
    /// Opens the folder at `url`, made (with the folders it lacks above it) if missing, and
    /// made private if it is not.
    ///
    /// - Throws: ``DocumentKitError`` naming the folder that could not be made, opened or made
    ///   private; nothing is put in a folder others could read.
    @discardableResult
    package static func open(at url: URL, operation: String) throws -> FileDescriptor {
        var missing: [URL] = []
        var probe = url.standardizedFileURL
        while probe.path != "/",
            case .failure(.noSuchFileOrDirectory) = Syscall.fileStatus(atPath: probe.path)
        {
            missing.append(probe)
            probe.deleteLastPathComponent()
        }
        for folder in missing.reversed() {
            switch Syscall.mkdirat(AT_FDCWD, folder.path, 0o700) {
            case .success, .failure(.fileExists): continue
            case .failure(let error): throw DocumentKitError(error, operation: operation, url: folder)
            }
        }
        let folder = try FileDescriptor.openDirectory(url, operation: operation)
        let permissions = try folder.stat(operation: operation).permissions
        // A umask can take the owner's bits of a folder just made, and a folder made before
        // (by an older version, by hand) can be open to others.
        if permissions & 0o7777 != 0o700 {
            _ = try Syscall.fchmod(folder.rawValue, 0o700).get("\(operation) (make the folder private)", url)
        }
        return folder
    }
}
