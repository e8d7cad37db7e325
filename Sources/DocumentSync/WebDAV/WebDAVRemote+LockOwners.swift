import DocumentKit
import Foundation

/// Whose a WebDAV lock is, from the owner it names.
///
/// - Every lock a device takes on a collection names the same owner, in every process of that
///   device: "DocumentSync lock of NAME (device ID), key KEY", where NAME and ID are the
///   device's name and short identifier (``DeviceIdentity``) and KEY is derived (SHA-256) from
///   the device's identifier and the collection's address, without user or password. No
///   secret is in it; the server shows it to anyone who may read the item's locks.
/// - A lock with this device's owner for this collection was left by a pass of this device that
///   was killed, interrupted, or whose `LOCK` answer was lost: it is given back at once
///   (`UNLOCK` with the token `lockdiscovery` gives), and the write goes on. A pass of the same
///   device still running (another container on the same collection) would lose its lock: its
///   write then fails on the lock's token and is tried again, never made blindly.
/// - A lock with any other owner is another device's or another client's: the write fails,
///   naming who holds the lock and when it expires, and the next pass tries again.
extension WebDAVRemote {
    /// How every owner this engine writes begins.
    static let lockOwnerPrefix = "DocumentSync lock of "

    /// The owner the locks of `device` on the collection at `collection` name.
    static func lockOwner(device: DeviceIdentity, collection: URL) -> String {
        let derived = ContentHash(
            of: Data(
                "DocumentSync WebDAV lock owner\n\(device.identifier)\n\(collection.absoluteString)".utf8))
        let name = printable(device.name, limit: 64)
        return
            "\(lockOwnerPrefix)\(name.isEmpty ? "a device" : name) (device \(printable(device.shortIdentifier, limit: 8))), key \(derived.hex.prefix(32))"
    }

    /// Who holds a lock, in words, from the owner it names: another device of this engine by
    /// its name, any other client by what its owner says (a server's text: shortened, with
    /// only printable characters).
    static func holder(ofLockOwnedBy owner: String) -> String {
        if owner.hasPrefix(lockOwnerPrefix), let key = owner.range(of: ", key ", options: .backwards) {
            let device = owner[
                owner.index(owner.startIndex, offsetBy: lockOwnerPrefix.count)..<key.lowerBound]
            return "another device, \(printable(String(device), limit: 80)),"
        }
        let shown = printable(owner, limit: 80)
        return shown.isEmpty ? "another client" : "another client (owner “\(shown)”)"
    }

    /// How long a lock still holds, in words, from its `timeout` in `lockdiscovery`
    /// ("Second-57", "Infinite").
    static func expiry(ofLockTimeout timeout: String, now: Date = Date()) -> String {
        let text = timeout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.lowercased().hasPrefix("second-"), let seconds = Int(text.dropFirst(7)), seconds >= 0
        else {
            return text.lowercased() == "infinite" ? "until it gives it back" : "until it expires"
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "HH:mm:ss"
        let until = formatter.string(from: now.addingTimeInterval(TimeInterval(seconds)))
        return "until \(until) (\(seconds) s from now) unless given back"
    }

    /// The failure of a request the server answered 423 (locked): naming who holds the lock
    /// when the item's locks say, else in general words.
    func lockedFailure(
        _ answer: HTTPAnswer, _ operation: RemoteError.Operation, _ path: RemotePath,
        destination: RemotePath? = nil, held locks: [Multistatus.ActiveLock]
    ) -> RemoteError {
        guard let lock = locks.first else {
            return error(status: answer, operation, path, destination: destination)
        }
        return failure(
            .other, operation, path, destination: destination,
            detail:
                "\(Self.holder(ofLockOwnedBy: lock.owner)) holds a lock on it, \(Self.expiry(ofLockTimeout: lock.timeout)) "
                + "(\(answer.method) answered HTTP 423); the next pass tries again")
    }

    /// `text` with only printable ASCII other than XML's special characters, at most `limit`
    /// characters: safe in a `LOCK` body and in a message.
    private static func printable(_ text: String, limit: Int) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.filter {
                    (0x20...0x7E).contains($0.value) && !"<>&\"'".unicodeScalars.contains($0)
                }
                .prefix(limit)))
    }
}
