import DocumentKit
import Foundation
import SimpleTextEditorDocument

/// The folder of text documents that `ste` and `docs` share, and the rules for naming them.
///
/// By default the container is `Simple Text Editor` in the user's Documents folder
/// (`$XDG_DOCUMENTS_DIR`, resolved as ``StandardDirectories`` does); the `STE_CONTAINER`
/// environment variable or a `--container PATH` option overrides it.
///
/// For example:
///
/// ```swift
/// let container = try TextContainer(path: nil)
/// let url = try container.url(forNewDocumentNamed: "Shopping list")   // …/Shopping list.txt
/// ```
public struct TextContainer: Sendable {
    /// The container folder.
    public let url: URL

    /// The environment variable that names a container folder.
    public static let environmentVariable = "STE_CONTAINER"

    /// The container at `path`, or the one the environment or the Documents folder names,
    /// created if missing (unless `creating` is false: a check that makes nothing).
    ///
    /// - Throws: ``DocumentKitError`` naming the folder when it cannot be created or is a file.
    public init(
        path: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
        creating: Bool = true
    ) throws {
        let chosen: URL
        if let path = Self.namedPath(path, environment: environment) {
            chosen = URL(fileURLWithPath: path, isDirectory: true)
        } else {
            chosen = StandardDirectories(environment: environment).documents
                .appendingPathComponent("Simple Text Editor", isDirectory: true)
        }
        url = chosen.standardizedFileURL
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw DocumentKitError(
                    .wrongFileType, operation: "use the container", url: url,
                    detail: "it is a file, not a folder")
            }
        } else if creating {
            do {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            } catch {
                throw DocumentKitError(
                    .ioFailure, operation: "create the container", url: url,
                    detail: "\(error.localizedDescription)")
            }
        }
    }

    /// The container folder `path` or the environment names, in that order; nil when neither
    /// does and the default one is used.
    public static func namedPath(_ path: String?, environment: [String: String]) -> String? {
        [path, environment[environmentVariable]].lazy.compactMap { $0 }.first { !$0.isEmpty }
    }

    /// The file extension of the container's documents.
    public static let fileExtension = "txt"

    /// Checks a name for a new document, as typed by a user: not empty, no slash, no leading
    /// dot, no control character, and short enough that the file name, with its `.txt`, is at
    /// most 255 bytes.
    ///
    /// Existing documents can have any name their file has: see
    /// ``url(forExistingDocumentNamed:)``.
    ///
    /// - Returns: The name without surrounding white space.
    /// - Throws: ``DocumentKitError`` with code `.invalidArgument` saying what is wrong.
    public static func validatedName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        func refuse(_ reason: String) -> DocumentKitError {
            // Spelled out: a bare `.invalidArgument` picks the Errno initializer and adds "(Invalid argument)".
            DocumentKitError(
                DocumentKitError.Code.invalidArgument, operation: "name the document", url: nil,
                detail: "“\(name)” \(reason)")
        }
        if trimmed.isEmpty { throw refuse("is empty") }
        if trimmed.contains("/") { throw refuse("contains a slash") }
        if trimmed.hasPrefix(".") { throw refuse("starts with a dot, which would hide it") }
        if trimmed.unicodeScalars.contains(where: {
            $0.value == 0 || $0.properties.generalCategory == .control
        }) {
            throw refuse("contains a control character")
        }
        if fileName(for: trimmed).utf8.count > 255 { throw refuse("is too long for a file name") }
        return trimmed
    }

    /// The file name of the document called `name`: `name` if it ends in `.txt`, else `name.txt`.
    static func fileName(for name: String) -> String {
        name.hasSuffix("." + fileExtension) ? name : name + "." + fileExtension
    }

    /// The URL of the document called `name` (with or without its `.txt` extension).
    public func url(forDocumentNamed name: String) throws -> URL {
        url.appendingPathComponent(Self.fileName(for: try Self.validatedName(name)))
    }

    /// The URL for a new document called `name`; fails if one exists already.
    public func url(forNewDocumentNamed name: String) throws -> URL {
        let target = try url(forDocumentNamed: name)
        if FileManager.default.fileExists(atPath: target.path) {
            throw DocumentKitError(
                .fileExists, operation: "create the document", url: target, errno: .fileExists)
        }
        return target
    }
}
