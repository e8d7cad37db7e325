import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The small files of settings and state DocumentKit keeps for the user (the ubiquity
/// containers, a key-value store): read whole, changed under a lock beside them
/// (`NAME.lock`), in a folder only their owner can enter.
package enum SettingsFile {
    /// The bytes of the file at `url`, or nil when there is none.
    ///
    /// - Throws: ``DocumentKitError`` naming the file and `operation` when it cannot be read.
    package static func contents(of url: URL, operation: String) throws -> Data? {
        do {
            return try Data(contentsOf: url)
        } catch CocoaError.fileReadNoSuchFile {
            return nil
        } catch {
            throw DocumentKitError(
                .ioFailure, operation: operation, url: url, detail: error.localizedDescription)
        }
    }

    /// Makes the file's folder (mode 0700) if missing and takes the file's lock: held until
    /// the returned descriptor goes away.
    package static func lock(_ url: URL, operation: String) throws -> FileDescriptor {
        let folder = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw DocumentKitError(
                .ioFailure, operation: operation, url: folder, detail: error.localizedDescription)
        }
        let lock = try FileDescriptor.open(
            URL(fileURLWithPath: url.path + ".lock"), O_RDWR | O_CREAT | O_CLOEXEC, mode: 0o600,
            operation: operation)
        _ = try Syscall.flock(lock.rawValue, LOCK_EX).get(operation, url)
        return lock
    }
}
