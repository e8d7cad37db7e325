import Foundation

/// What stands for a document kept only on the server: `.NAME.icloud` beside where the
/// document would be, as iCloud Drive names its placeholders, holding a property list with
/// the document's name and size under Apple's keys (`NSURLNameKey`, `NSURLFileSizeKey`,
/// `NSURLFileResourceTypeKey`).
///
/// The query and `docs list` show a placeholder as its document (not downloaded, with its
/// size); `startDownloadingUbiquitousItem(at:)` and opening the document replace it with the
/// document.
public struct UbiquityPlaceholder: Sendable, Equatable {
    /// The document's file name.
    public var name: String
    /// The document's size in bytes on the server.
    public var size: Int64
    /// Where in its container the document was when it was left on the server (a path
    /// relative to the container): a placeholder found elsewhere was moved there, and sync
    /// moves the document to match rather than take the move for a deletion.
    public var path: String?

    public init(name: String, size: Int64, path: String? = nil) {
        self.name = name
        self.size = size
        self.path = path
    }

    /// The placeholder of the document at `url`: `.NAME.icloud` in the same folder.
    public static func placeholderURL(for url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(
            placeholderName(forDocumentName: url.lastPathComponent))
    }

    /// The name of the placeholder of the document called `name` (`NAME` → `.NAME.icloud`).
    public static func placeholderName(forDocumentName name: String) -> String {
        ".\(name).icloud"
    }

    /// The document a placeholder file name stands for (`.NAME.icloud` → `NAME`), or nil
    /// when the name is not a placeholder's.
    public static func documentName(forPlaceholderName name: String) -> String? {
        guard name.hasPrefix("."), name.hasSuffix(".icloud"), name.count > ".x.icloud".count - 1 else {
            return nil
        }
        let inner = String(name.dropFirst().dropLast(".icloud".count))
        return inner.isEmpty || inner.hasPrefix(".") ? nil : inner
    }

    /// The placeholder's contents: a binary property list, as iCloud writes them.
    public func encoded() throws -> Data {
        var plist: [String: Any] = [
            "NSURLNameKey": name, "NSURLFileSizeKey": NSNumber(value: size),
            "NSURLFileResourceTypeKey": "NSURLFileResourceTypeRegular",
        ]
        if let path { plist[Self.pathKey] = path }
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }

    /// DocumentKit's own key: where the document was when it was left on the server.
    static let pathKey = "DocumentKitContainerPath"

    /// The placeholder in `data`, or nil when `data` is not one.
    public init?(decoding data: Data) {
        guard
            let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)
                as? [String: Any],
            let name = plist["NSURLNameKey"] as? String, let size = plist["NSURLFileSizeKey"] as? NSNumber
        else { return nil }
        self.init(name: name, size: size.int64Value, path: plist[Self.pathKey] as? String)
    }

    /// The placeholder at `url` (a placeholder's own URL), or nil when none is there.
    public init?(contentsOf url: URL) {
        guard let data = try? Data(contentsOf: url) else { return nil }
        self.init(decoding: data)
    }
}
