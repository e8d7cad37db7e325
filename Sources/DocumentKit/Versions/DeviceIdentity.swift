import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A device as versions and sync tell it from every other: a random identifier made once and
/// kept in its state folder, and the host name people know it by.
///
/// A host name is no identity: cloned virtual machines, Raspberry Pis and a default
/// "localhost" share theirs. So whatever says "mine" or "theirs" compares identifiers, never
/// names:
///
/// - a version's record keeps the identifier of the device that made its contents
///   (``FileVersion/savingDeviceIdentifier``), and a conflict version is the user's own
///   ("mine", ``FileVersion/isFromThisComputer``) only when that identifier is this device's;
///   a version with no identifier (stored before identifiers were kept, or described so by
///   another device) is "mine" only when it can be proven so;
/// - sync shares the identifier with every conflict it shares, and a WebDAV lock's owner is
///   derived from it, so a device finds its own lock after a killed pass;
/// - people see the name, and the identifier's first characters where two devices may share
///   one (``description``).
///
/// The identifier is kept in `STATE/DocumentKit/device` (`$XDG_STATE_HOME`, by default
/// `~/.local/state`), mode 0600 in a folder of mode 0700: made by the first process that asks,
/// read by every later one, made again only when the file is damaged. Two processes that make
/// it at once agree on the first written. A copy of the state folder (a virtual machine cloned
/// with it) is the same device, as its journals say too.
///
/// For example:
///
/// ```swift
/// let device = DeviceIdentity.current
/// print("syncing as \(device)")     // "raspberrypi (device 1F0C29A3)"
/// let store = VersionStore(root: folder, device: device)
/// ```
public struct DeviceIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The device's identifier: random, made once, the same in every process of the device.
    public let identifier: String
    /// The name people know the device by (its host name): not unique.
    public let name: String

    /// An identity with the given parts, for a device whose identifier is known (tests, tools
    /// that act for another device).
    public init(identifier: String, name: String) {
        self.identifier = identifier
        self.name = name
    }

    /// The identifier's first eight characters: enough for a person to tell two devices of the
    /// same name apart.
    public var shortIdentifier: String { String(identifier.prefix(8)) }

    /// The name and the short identifier: "raspberrypi (device 1F0C29A3)".
    public var description: String { "\(name) (device \(shortIdentifier))" }

    /// Whether `text` can be a device identifier: 1 to 64 ASCII letters, digits and hyphens.
    /// What a record, a remote or a file says is checked with this before it is compared.
    public static func isValidIdentifier(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...64).contains(bytes.count)
            && bytes.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D
            }
    }

    /// `text` when it is a valid identifier (``isValidIdentifier(_:)``), else nil: what a
    /// record, a message or a remote says of a device, before it is compared with this one.
    package static func validIdentifier(_ text: String?) -> String? {
        text.flatMap { isValidIdentifier($0) ? $0 : nil }
    }

    /// This device: the identity kept in the default state folder
    /// (``StandardDirectories/stateHome(environment:)``), named by the host name.
    public static var current: DeviceIdentity { kept(inStateFolder: nil) }

    /// The identity kept in the state folder `stateHome` (nil for the default), made there the
    /// first time; named by the host name. Read once per process and folder.
    ///
    /// A state folder that cannot be written gives an identity for this process alone,
    /// reported once through ``DocumentLog``: what it makes is then never proven "mine" by a
    /// later process.
    public static func kept(inStateFolder stateHome: URL?) -> DeviceIdentity {
        let file = (stateHome ?? StandardDirectories.stateHome()).appendingPathComponent("DocumentKit/device")
        let key = file.standardizedFileURL.path
        if let known = known.withLock({ $0[key] }) { return known }
        let identifier = keptIdentifier(in: file)
        let identity = DeviceIdentity(identifier: identifier, name: ProcessInfo.processInfo.hostName)
        return known.withLock { known in
            // Two threads that read it at once keep the first.
            if let first = known[key] { return first }
            known[key] = identity
            return identity
        }
    }

    private static let known = Mutex<[String: DeviceIdentity]>([:])

    /// The identifier in `file`, made first when there is none or it is damaged.
    private static func keptIdentifier(in file: URL) -> String {
        do {
            try makePrivateFolder(file.deletingLastPathComponent())
            if let found = read(file) { return found }
            let made = UUID().uuidString
            if case .success = Syscall.fstatat(AT_FDCWD, file.path, followLinks: false) {
                // Damaged (or a link, which is not followed): replaced, not written through.
                DocumentLog.write("\(file.path) does not hold a device identifier; a new one is made")
                _ = Syscall.unlinkat(AT_FDCWD, file.path)
            }
            // Created only if absent: two processes making it at once agree on the first written.
            do {
                try SafeSave.write(
                    Data("\(made)\n".utf8), to: file, options: .withoutOverwriting, permissions: 0o600)
            } catch let error as DocumentKitError where error.code == .fileExists {}
            if let found = read(file) { return found }
            DocumentLog.write("\(file.path) cannot be read back; this process names its device on its own")
        } catch {
            DocumentLog.write("\(error); this process names its device on its own")
        }
        return UUID().uuidString
    }

    /// The identifier in `file` when it is this user's regular file (not a link) holding a
    /// valid one, made private (0600) if it was not; nil otherwise.
    private static func read(_ file: URL) -> String? {
        guard case .success(let fd) = Syscall.openat(AT_FDCWD, file.path, O_RDONLY | O_NOFOLLOW) else {
            return nil
        }
        let descriptor = FileDescriptor(rawValue: fd, url: file)
        guard let info = try? descriptor.stat(operation: "read the device identifier"), info.isRegularFile,
            info.st_uid == geteuid(), info.st_size <= 4096,
            let data = try? descriptor.readToEnd(sizeHint: Int(info.st_size))
        else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard isValidIdentifier(text) else { return nil }
        if info.permissions & 0o077 != 0 { _ = Syscall.fchmod(fd, 0o600) }
        return text
    }

    /// Makes `folder` (and the folders above it) when missing, and makes it private (0700)
    /// when an older DocumentKit, or another program, left it open to others.
    private static func makePrivateFolder(_ folder: URL) throws {
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if case .success(let info) = Syscall.fstatat(AT_FDCWD, folder.path, followLinks: false),
            info.isDirectory, info.permissions & 0o077 != 0, info.st_uid == geteuid(),
            case .failure(let error) = Syscall.chmod(folder.path, 0o700)
        {
            DocumentLog.write(
                "\(DocumentKitError(error, operation: "make the state folder private", url: folder))")
        }
    }
}

/// The device that made a version's contents, as its record keeps it: the computer's name
/// for people, the device's identifier for "mine" and "theirs".
package struct VersionOrigin: Sendable, Equatable {
    /// The computer's name; nil when unknown.
    package var computer: String?
    /// The device's identifier; nil when unknown, which is never this device.
    package var device: String?

    package init(computer: String?, device: String?) {
        self.computer = computer
        self.device = device
    }

    /// The contents of `identity`'s device.
    package init(_ identity: DeviceIdentity) {
        self.init(computer: identity.name, device: identity.identifier)
    }
}
