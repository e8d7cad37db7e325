import Foundation
import Synchronization

/// The registry of document types: uniform type identifiers and their file name extensions.
///
/// Linux has no Launch Services, so a document's ``Document/fileType`` comes from its
/// extension through this registry. It knows the common types; apps add their own.
///
/// For example:
///
/// ```swift
/// FileTypes.shared.register(FileTypes.FileType(
///     identifier: "com.example.locus", filenameExtensions: ["locus"], conformsTo: ["public.data"]))
/// ```
public final class FileTypes: Sendable {
    /// A document type.
    public struct FileType: Sendable, Hashable {
        /// The uniform type identifier, such as `public.plain-text`.
        public var identifier: String
        /// The extensions, preferred first, without the dot.
        public var filenameExtensions: [String]
        /// The identifiers this type conforms to, such as `public.text`.
        public var conformsTo: [String]
        /// Whether documents of this type are package folders.
        public var isPackage: Bool

        public init(
            identifier: String, filenameExtensions: [String], conformsTo: [String] = [],
            isPackage: Bool = false
        ) {
            self.identifier = identifier
            self.filenameExtensions = filenameExtensions
            self.conformsTo = conformsTo
            self.isPackage = isPackage
        }
    }

    /// The process's registry.
    public static let shared = FileTypes()

    private let types = Mutex<[String: FileType]>([:])

    /// Creates a registry that knows the common types.
    public init() {
        for type in [
            FileType(
                identifier: "public.plain-text", filenameExtensions: ["txt", "text"],
                conformsTo: ["public.text"]),
            FileType(
                identifier: "net.daringfireball.markdown", filenameExtensions: ["md", "markdown"],
                conformsTo: ["public.plain-text"]),
            FileType(identifier: "public.json", filenameExtensions: ["json"], conformsTo: ["public.text"]),
            FileType(identifier: "public.xml", filenameExtensions: ["xml"], conformsTo: ["public.text"]),
            FileType(identifier: "public.rtf", filenameExtensions: ["rtf"], conformsTo: ["public.text"]),
            FileType(
                identifier: "public.html", filenameExtensions: ["html", "htm"], conformsTo: ["public.text"]),
            FileType(identifier: "public.png", filenameExtensions: ["png"], conformsTo: ["public.image"]),
            FileType(
                identifier: "public.jpeg", filenameExtensions: ["jpg", "jpeg"], conformsTo: ["public.image"]),
            FileType(identifier: "com.adobe.pdf", filenameExtensions: ["pdf"], conformsTo: ["public.data"]),
            FileType(
                identifier: "com.apple.property-list", filenameExtensions: ["plist"],
                conformsTo: ["public.data"]),
            FileType(
                identifier: "com.apple.rtfd", filenameExtensions: ["rtfd"], conformsTo: ["com.apple.package"],
                isPackage: true),
        ] {
            register(type)
        }
    }

    /// Adds or replaces a type.
    public func register(_ type: FileType) {
        types.withLock { $0[type.identifier] = type }
    }

    /// The type registered under `identifier`.
    public func type(withIdentifier identifier: String) -> FileType? {
        types.withLock { $0[identifier] }
    }

    /// The identifier for files ending in `.ext`, or `public.data` when none is registered.
    public func typeIdentifier(forFilenameExtension filenameExtension: String) -> String {
        let lowered = filenameExtension.lowercased()
        guard !lowered.isEmpty else { return "public.data" }
        return types.withLock { types in
            types.values.filter { $0.filenameExtensions.contains(lowered) }.map(\.identifier).min()
        } ?? "public.data"
    }

    /// The extension files of `identifier` are saved with.
    public func preferredFilenameExtension(forType identifier: String) -> String? {
        types.withLock { $0[identifier]?.filenameExtensions.first }
    }
}
