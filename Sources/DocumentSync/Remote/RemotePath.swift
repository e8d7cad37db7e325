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
    /// The names from the root down, each in NFC; empty for the root.
    public let components: [String]

    /// Splits `string` on "/", drops empty components (so leading, trailing and doubled
    /// slashes mean nothing), and normalises each component to NFC.
    public init(_ string: String) {
        components = string.split(separator: "/", omittingEmptySubsequences: true).map {
            Self.normalized(String($0))
        }
    }

    /// A path of `components`, each normalised to NFC and otherwise taken as it is: a
    /// component holding "/" or nothing makes a path no remote accepts.
    public init(components: [String]) {
        self.components = components.map(Self.normalized)
    }

    /// The root folder of the remote.
    public static let root = RemotePath(components: [])

    /// The components joined with "/": "a/b/c.txt", and "" for the root.
    public var string: String { components.joined(separator: "/") }

    /// The last component; "" for the root.
    public var name: String { components.last ?? "" }

    /// The folder that holds this item; the root's parent is the root.
    public var parent: RemotePath { RemotePath(normalizedComponents: Array(components.dropLast())) }

    /// Whether this is the root folder.
    public var isRoot: Bool { components.isEmpty }

    /// The path of `name` inside this folder (`name` is one component, normalised to NFC).
    public func appending(_ name: String) -> RemotePath {
        RemotePath(normalizedComponents: components + [Self.normalized(name)])
    }

    /// Whether this path is strictly inside `folder`: every path but the root is inside the
    /// root, and no path is inside itself.
    public func isDescendant(of folder: RemotePath) -> Bool {
        components.count > folder.components.count && components.starts(with: folder.components)
    }

    /// This path with its leading `folder` replaced by `destination`, for an item inside a
    /// folder that moves; nil when the path is neither `folder` nor inside it.
    public func replacingPrefix(_ folder: RemotePath, with destination: RemotePath) -> RemotePath? {
        guard self == folder || isDescendant(of: folder) else { return nil }
        return RemotePath(
            normalizedComponents: destination.components + components.dropFirst(folder.components.count))
    }

    /// The path as it reads in a message: its string, or "/" for the root.
    public var description: String { isRoot ? "/" : string }

    public static func < (lhs: RemotePath, rhs: RemotePath) -> Bool {
        lhs.components.lexicographicallyPrecedes(rhs.components)
    }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }

    /// Whether `component` can be a name on any remote: not empty, not "." or "..", and
    /// without "/" or NUL. A remote may refuse more (a length limit, reserved names).
    public static func isValidComponent(_ component: String) -> Bool {
        !component.isEmpty && component != "." && component != ".."
            && !component.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "/") })
    }

    private init(normalizedComponents: [String]) {
        components = normalizedComponents
    }

    private static func normalized(_ component: String) -> String {
        // Most names are ASCII, which is NFC already: skip Foundation's normalisation for them.
        if component.utf8.allSatisfy({ $0 < 0x80 }) { return component }
        return component.precomposedStringWithCanonicalMapping
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
