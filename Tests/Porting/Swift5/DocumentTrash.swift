// A document list's "Move to Trash", as iOS and macOS apps write it: FileManager's trashItem
// with the resulting URL kept, so the app can say where the document went. Only the imports
// differ.
import DocumentKit
import Foundation

public final class DocumentTrash {
    /// Where each document the list moved to the trash is now, by its old URL.
    public private(set) var trashedLocations: [URL: URL] = [:]

    public init() {}

    public func moveToTrash(_ url: URL) throws {
        var resultingURL: NSURL?
        try FileManager.default.trashItem(at: url, resultingItemURL: &resultingURL)
        if let trashedURL = resultingURL as URL? {
            trashedLocations[url] = trashedURL
        }
    }
}
