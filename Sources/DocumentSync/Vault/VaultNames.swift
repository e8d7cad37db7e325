import Foundation
import Synchronization

/// How an item of a folder is stored in the folder's directory in the vault.
public enum VaultEntryName: Hashable, Sendable {
    /// `<base64url>.c9r`: a file of that name holding the contents, or, for a folder, a folder
    /// of that name holding `dir.c9r`.
    case regular(String)
    /// A name whose encrypted form is longer than the shortening threshold: a folder
    /// `<base64url of SHA-1>.c9s` holding `name.c9s` (the encrypted name, `fullName`) and
    /// `contents.c9r` for a file or `dir.c9r` for a folder.
    case shortened(String, fullName: String)

    /// The name in the directory: the `.c9r` file or folder, or the `.c9s` folder.
    public var storedName: String {
        switch self {
        case .regular(let name): return name
        case .shortened(let name, _): return name
        }
    }
}

/// Names and directory paths in vault format 8.
///
/// A name is normalized to Unicode form C, encrypted with AES-SIV under the vault's key with
/// its folder's directory ID as associated data, spelled in base64url and given the extension
/// `.c9r`: the same name in another folder is stored differently, and a stored name moved to
/// another folder no longer decrypts. A folder's items are stored in the directory
/// `d/XX/YYYY...`, where `XXYYYY...` is the base32 of the SHA-1 of the AES-SIV encryption of
/// its directory ID (the root's is empty; each other folder's is a random UUID, kept in a
/// `dir.c9r` file where its parent lists it).
///
/// For example:
///
/// ```swift
/// let names = VaultNameCipher(keys: keys)
/// let folder = try names.directoryPath(of: VaultNameCipher.rootDirectoryID)  // "d/AB/CDEF..."
/// let entry = try names.entryName(for: "todo.txt", parentDirectoryID: VaultNameCipher.rootDirectoryID)
/// // folder + "/" + entry.storedName holds todo.txt's contents
/// ```
public struct VaultNameCipher: Sendable {
    /// The root folder's directory ID.
    public static let rootDirectoryID = ""
    /// The file in a folder's entry that holds the folder's directory ID.
    public static let directoryIDFileName = "dir.c9r"
    /// The file in a shortened entry that holds a file's contents.
    public static let contentsFileName = "contents.c9r"
    /// The file in a shortened entry that holds the full encrypted name.
    public static let longNameFileName = "name.c9s"
    /// The file in a folder's directory that holds its directory ID encrypted (a backup
    /// Cryptomator writes, for recovery when a `dir.c9r` is lost).
    public static let directoryIDBackupFileName = "dirid.c9r"
    /// The file in an entry that marks a symbolic link (which this program does not make).
    public static let symlinkFileName = "symlink.c9r"
    /// The most bytes a `dir.c9r` or `name.c9s` is read as.
    public static let smallFileLimit = 16 << 10

    /// AES-SIV under the vault's key (the MAC key, then the encryption key), keyed once.
    private let siv: AESSIV.Keyed
    /// Directory paths by directory ID, as ``directoryPath(of:)`` made them: a path is a
    /// function of the ID alone, asked for again at every file of a folder.
    private let directoryPaths: DirectoryPaths
    /// Encrypted names longer than this (`.c9r` included) are stored shortened.
    public let shorteningThreshold: Int

    public init(keys: VaultMasterKeys, shorteningThreshold: Int = 220) {
        siv = AESSIV.Keyed(key: keys.sivKey)
        directoryPaths = DirectoryPaths()
        self.shorteningThreshold = shorteningThreshold
    }

    /// `name` encrypted for the folder whose directory ID is `parentDirectoryID`:
    /// `<base64url>.c9r`, however long.
    ///
    /// - Throws: ``VaultError`` `.invalidName` for a name a vault cannot hold.
    public func encryptedName(for name: String, parentDirectoryID: String) throws -> String {
        // An ASCII name is its own form C; normalizing it cost more than encrypting it.
        let normalized =
            name.utf8.allSatisfy { $0 < 0x80 } ? name : name.precomposedStringWithCanonicalMapping
        guard Self.isValid(normalized) else {
            throw VaultError(.invalidName, item: VaultError.shown(name))
        }
        let sealed = try siv.seal(Data(normalized.utf8), associatedData: [Data(parentDirectoryID.utf8)])
        return Base64URL.encode(sealed) + ".c9r"
    }

    /// How `name` is stored in the folder whose directory ID is `parentDirectoryID`: its
    /// encrypted name, or, past the shortening threshold, the `.c9s` folder that stands for it.
    ///
    /// - Throws: ``VaultError`` `.invalidName` for a name a vault cannot hold.
    public func entryName(for name: String, parentDirectoryID: String) throws -> VaultEntryName {
        let encrypted = try encryptedName(for: name, parentDirectoryID: parentDirectoryID)
        guard encrypted.utf8.count > shorteningThreshold else { return .regular(encrypted) }
        return .shortened(Self.shortenedName(of: encrypted), fullName: encrypted)
    }

    /// The plain name of a stored entry of the folder whose directory ID is `parentDirectoryID`.
    ///
    /// - Parameters:
    ///   - storedName: The entry's name in the directory (`.c9r` or `.c9s`).
    ///   - longName: For a `.c9s` entry, the contents of its `name.c9s`.
    ///   - item: How errors name the entry.
    /// - Throws: ``VaultError`` naming `item`: `.malformedName` for what is no encrypted name (or a
    ///   `name.c9s` whose hash is not its folder's name); `.forgedName` if it does not decrypt
    ///   under `parentDirectoryID` (altered, or moved from another folder); `.invalidName` if it
    ///   decrypts to a name no folder may hold ("..", a "/").
    public func decryptedName(
        storedName: String, longName: Data? = nil, parentDirectoryID: String, item: String
    ) throws -> String {
        let encrypted: String
        if storedName.hasSuffix(".c9s") {
            guard let longName, longName.count <= Self.smallFileLimit,
                let text = String(data: longName, encoding: .utf8)
            else {
                throw VaultError(
                    .malformedName, item: item, "\(Self.longNameFileName) is missing or not UTF-8")
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard Self.shortenedName(of: trimmed) == storedName else {
                throw VaultError(
                    .malformedName, item: item, "\(Self.longNameFileName) does not match the folder's name")
            }
            encrypted = trimmed
        } else {
            encrypted = storedName
        }
        guard encrypted.hasSuffix(".c9r"), let sealed = Base64URL.decode(String(encrypted.dropLast(4))),
            sealed.count > AESSIV.tagCount
        else { throw VaultError(.malformedName, item: item) }
        let plain: Data
        do {
            plain = try siv.open(sealed, associatedData: [Data(parentDirectoryID.utf8)])
        } catch let error as VaultError where error.code == .authenticationFailed {
            throw VaultError(.forgedName, item: item)
        }
        guard let name = String(data: plain, encoding: .utf8), Self.isValid(name) else {
            throw VaultError(.invalidName, item: item, "decrypts to a name no folder may hold")
        }
        return name
    }

    /// The directory, relative to the vault's top, that holds the items of the folder whose
    /// directory ID is `directoryID`: `d/` and two characters, `/` and thirty more.
    public func directoryPath(of directoryID: String) throws -> String {
        if let kept = directoryPaths.paths.withLock({ $0[directoryID] }) { return kept }
        let sealed = try siv.seal(Data(directoryID.utf8))
        let hash = Base32.encode(Digests.sha1(sealed))
        let path = "d/" + hash.prefix(2) + "/" + hash.dropFirst(2)
        directoryPaths.paths.withLock { paths in
            // A bound on what is kept: a tree of more folders than this makes them again.
            if paths.count >= DirectoryPaths.mostKept { paths.removeAll(keepingCapacity: true) }
            paths[directoryID] = path
        }
        return path
    }

    /// A fresh directory ID for a new folder: a random UUID in lower case, as Cryptomator makes.
    public static func newDirectoryID() -> String {
        UUID().uuidString.lowercased()
    }

    /// The directory ID in a `dir.c9r`'s contents.
    ///
    /// - Throws: ``VaultError`` `.malformedDirectoryID` naming `item` unless it is 1 to 36
    ///   printable ASCII characters (the format's limit; Cryptomator writes UUIDs).
    public static func directoryID(contents: Data, item: String) throws -> String {
        guard (1...36).contains(contents.count), contents.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw VaultError(.malformedDirectoryID, item: item, "\(contents.count) bytes")
        }
        return String(decoding: contents, as: UTF8.self)
    }

    /// The `.c9s` name that stands for the encrypted name `encrypted` (`.c9r` included).
    static func shortenedName(of encrypted: String) -> String {
        Base64URL.encode(Digests.sha1(Data(encrypted.utf8))) + ".c9s"
    }

    private static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(UInt8(ascii: "/"))
            && !name.utf8.contains(0)
    }
}

/// The directory paths a ``VaultNameCipher`` made, shared by its copies.
private final class DirectoryPaths: Sendable {
    static let mostKept = 4096
    let paths = Mutex<[String: String]>([:])
}
