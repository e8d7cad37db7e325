import Foundation

/// A relative path on a remote: "/"-separated components in Unicode NFC; the root is the
/// empty path.
///
/// Every component is normalised to NFC when the path is made, so that a name typed on one
/// system ("e" + combining acute) and the same name from another ("é") are one path, in the
/// journal, in listings and on the wire. A path says nothing about whether its names are valid
/// on a given remote: a remote checks that when it is asked to use one
/// (``RemoteError/Kind/invalidName``).
///
/// Paths sort component by component, so a folder comes right before what it contains.
///
/// For example:
///
/// ```swift
/// let path = RemotePath("Notes/Week 1/plan.txt")
/// path.name                                    // "plan.txt"
/// path.parent                                  // "Notes/Week 1"
/// path.isDescendant(of: RemotePath("Notes"))   // true
/// RemotePath("cafe\u{301}") == RemotePath("café")   // true
/// ```
public struct RemotePath: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    /// The components joined with "/": "a/b/c.txt", and "" for the root.
    ///
    /// A path is kept as this one string, so that hashing, comparing and appending (what a
    /// pass over thousands of items does most) cost one string's work, not an array's.
    public let string: String
    /// The components as given, when one of them holds "/" or nothing: such a path names
    /// nothing any remote accepts, and equals no path made of valid names. Nil otherwise.
    private let malformed: [String]?

    /// Splits `string` on "/", drops empty components (so leading, trailing and doubled
    /// slashes mean nothing), and normalises each component to NFC.
    public init(_ string: String) {
        if Self.isClean(string) {
            self.init(normalized: string)
        } else {
            self.init(
                components: string.split(separator: "/", omittingEmptySubsequences: true).map(String.init))
        }
    }

    /// A path of `components`, each normalised to NFC and otherwise taken as it is: a
    /// component holding "/" or nothing makes a path no remote accepts.
    public init(components: [String]) {
        let normalized = components.map(Self.normalized)
        string = normalized.joined(separator: "/")
        malformed = normalized.allSatisfy(Self.joinsCleanly) ? nil : normalized
    }

    /// The names from the root down, each in NFC; empty for the root.
    public var components: [String] {
        if let malformed { return malformed }
        return string.isEmpty ? [] : string.split(separator: "/").map(String.init)
    }

    /// How many components the path has: 0 for the root.
    var depth: Int {
        if let malformed { return malformed.count }
        return string.isEmpty ? 0 : string.utf8.count { $0 == Self.slash } + 1
    }

    /// The root folder of the remote.
    public static let root = RemotePath(normalized: "")

    /// The last component; "" for the root.
    public var name: String {
        if let malformed { return malformed.last ?? "" }
        guard let slash = string.utf8.lastIndex(of: Self.slash) else { return string }
        return String(string[string.utf8.index(after: slash)...])
    }

    /// The folder that holds this item; the root's parent is the root.
    public var parent: RemotePath {
        if let malformed { return RemotePath(components: Array(malformed.dropLast())) }
        guard let slash = string.utf8.lastIndex(of: Self.slash) else { return .root }
        return RemotePath(normalized: String(string[..<slash]))
    }

    /// Whether this is the root folder.
    public var isRoot: Bool { string.isEmpty && malformed == nil }

    /// The path of `name` inside this folder (`name` is one component, normalised to NFC).
    public func appending(_ name: String) -> RemotePath {
        let name = Self.normalized(name)
        guard malformed == nil, Self.joinsCleanly(name) else {
            return RemotePath(components: components + [name])
        }
        return RemotePath(normalized: string.isEmpty ? name : string + "/" + name)
    }

    /// Whether this path is strictly inside `folder`: every path but the root is inside the
    /// root, and no path is inside itself.
    public func isDescendant(of folder: RemotePath) -> Bool {
        guard malformed == nil, folder.malformed == nil else {
            return components.count > folder.components.count && components.starts(with: folder.components)
        }
        if folder.string.isEmpty { return !string.isEmpty }
        let (inner, outer) = (string.utf8, folder.string.utf8)
        guard inner.count > outer.count, inner.starts(with: outer) else { return false }
        return inner[inner.index(inner.startIndex, offsetBy: outer.count)] == Self.slash
    }

    /// This path with its leading `folder` replaced by `destination`, for an item inside a
    /// folder that moves; nil when the path is neither `folder` nor inside it.
    public func replacingPrefix(_ folder: RemotePath, with destination: RemotePath) -> RemotePath? {
        guard self == folder || isDescendant(of: folder) else { return nil }
        return RemotePath(components: destination.components + components.dropFirst(folder.components.count))
    }

    /// The path as it reads in a message: its string, or "/" for the root.
    public var description: String { isRoot ? "/" : string }

    /// Component by component: on the UTF-8 bytes of NFC names (the order of their scalars,
    /// which is how Swift orders strings), with the "/" between names before any byte.
    public static func < (lhs: RemotePath, rhs: RemotePath) -> Bool {
        if lhs.malformed != nil || rhs.malformed != nil {
            return lhs.components.lexicographicallyPrecedes(rhs.components)
        }
        var left = lhs.string.utf8.makeIterator()
        var right = rhs.string.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return false
            case (nil, _): return true
            case (_, nil): return false
            case (let a?, let b?) where a != b:
                if a == slash { return true }
                if b == slash { return false }
                return a < b
            default: continue
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }

    /// Whether `component` can be a name on any remote: not empty, not "." or "..", and
    /// without "/", NUL or another control character (see ``problem(withName:)``). A remote
    /// may refuse more (a length limit, reserved names).
    public static func isValidComponent(_ component: String) -> Bool {
        problem(withName: component) == nil
    }

    /// Why `name` cannot be one item's name, on a remote or here, in words that follow "it"
    /// ("is empty", "holds a control character"); nil when it can.
    ///
    /// A name is one component: not empty, not "." or ".." (the folder itself and its parent),
    /// without "/" (which would make it several names) and without NUL or another control
    /// character (C0, DEL and C1: they end a C string early, or give orders to a terminal that
    /// shows the name). A name a server gives is checked with this when its listing is parsed,
    /// and a name sync writes must pass it too, so that sync never makes a name it would refuse
    /// in a listing.
    public static func problem(withName name: String) -> String? {
        // Most names are printable ASCII without "/": nothing more to check.
        if allBytes(of: name, { $0 >= 0x20 && $0 < 0x7F && $0 != slash }), name != ".", name != ".." {
            return nil
        }
        if name.isEmpty { return "is empty" }
        if name == "." || name == ".." { return "is “\(name)”, which names a folder itself or its parent" }
        var previous: UInt8 = 0
        for byte in name.utf8 {
            if byte == slash { return "holds “/”, which would make it several names" }
            if byte == 0 { return "holds a NUL character" }
            // C0 and DEL are single bytes; C1 (U+0080–U+009F) is 0xC2 then 0x80–0x9F in UTF-8.
            if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && (0x80...0x9F).contains(byte)) {
                return "holds a control character"
            }
            previous = byte
        }
        return nil
    }

    /// `name` as messages show it: between quotes, escaped (see ``escaped(_:)``).
    static func shown(_ name: String) -> String { "“" + escaped(name) + "”" }

    /// `text` with every control character written as its escape (`\u{1B}`), so that a name
    /// from a server cannot give orders to the terminal that shows a message.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                escaped += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static let slash = UInt8(ascii: "/")

    /// How the names begin that sync keeps for its own files beside the documents: a download
    /// or a merge on its way here (`.documentsync-….download`), a write in progress on a remote
    /// (``writeInProgressPrefix``), a probe of a server. Hidden, so never a document: a listing
    /// leaves them out, and the engine never takes one for an item.
    static let reservedPrefix = ".documentsync-"

    /// Whether `name` is one sync keeps for its own files (see ``reservedPrefix``).
    static func isReserved(_ name: String) -> Bool { name.utf8.starts(with: reservedPrefix.utf8) }

    /// How the hidden names begin that a remote writes a file under before moving it into
    /// place: listings pass over them, and no item may be given one.
    static let writeInProgressPrefix = ".documentsync-tmp-"

    /// Whether a remote that takes names of up to 255 bytes can hold every name of the path,
    /// none of them a write in progress's (``writeInProgressPrefix``); the root only when
    /// `allowingRoot`.
    func holdsStorableNames(allowingRoot: Bool) -> Bool {
        (allowingRoot || !isRoot)
            && components.allSatisfy {
                Self.isValidComponent($0) && $0.utf8.count <= 255 && !$0.hasPrefix(Self.writeInProgressPrefix)
            }
    }

    /// Whether `component` can be kept joined in ``string`` and split back out: not empty,
    /// without "/".
    private static func joinsCleanly(_ component: String) -> Bool {
        !component.isEmpty && !component.utf8.contains(slash)
    }

    /// A path whose string is already as ``string`` keeps it: NFC names joined by single "/".
    private init(normalized string: String) {
        self.string = string
        malformed = nil
    }

    /// Whether `string` is ASCII (NFC already) with no empty component: taken as it is.
    private static func isClean(_ string: String) -> Bool {
        var afterSlash = true
        for byte in string.utf8 {
            if byte >= 0x80 { return false }
            if byte == slash {
                if afterSlash { return false }
                afterSlash = true
            } else {
                afterSlash = false
            }
        }
        return string.isEmpty || !afterSlash
    }

    /// `component` in NFC.
    static func normalized(_ component: String) -> String {
        // Most names are ASCII, which is NFC already: skip Foundation's normalisation for them.
        if allBytes(of: component, { $0 < 0x80 }) { return component }
        return component.precomposedStringWithCanonicalMapping
    }

    /// Whether `text` is not empty and each of its UTF-8 bytes satisfies `test`, read where the
    /// string keeps them contiguous (a native string does): every listed name comes here, and
    /// iterating a String's UTF-8 view costs several times as much.
    private static func allBytes(of text: String, _ test: (UInt8) -> Bool) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { !$0.isEmpty && $0.allSatisfy(test) }
            ?? (!text.isEmpty && text.utf8.allSatisfy(test))
    }
}

extension RemotePath {
    /// The engine's own folder at the root of every remote, `.documentsync`: conflicts and
    /// anything else sync keeps beside the documents.
    ///
    /// Remotes list it like any folder (the engine skips it when it compares trees); a remote
    /// may keep its own bookkeeping inside (``LocalFolderRemote`` keeps its lock there).
    public static let metadataFolder = RemotePath(components: [".documentsync"])

    /// Whether this path is the metadata folder or inside it.
    public var isMetadata: Bool {
        self == Self.metadataFolder || isDescendant(of: Self.metadataFolder)
    }
}
