// Deleting a document the recoverable way from a Swift 6 model layer: trashItem with no
// resulting URL, its error reported. Only the imports differ.
import DocumentKit
import Foundation

public struct DocumentRemover: Sendable {
    public init() {}

    /// Moves the document to the trash; the error's description when it could not.
    public func remove(_ url: URL) -> String? {
        do {
            try FileManager.default.trashItem(at: url, resultingItemURL: nil)
            return nil
        } catch {
            return error.localizedDescription
        }
    }
}
