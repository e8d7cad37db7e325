// Coordinated delete and move helpers in a FileManager extension, the pattern Apple's sample
// code uses for documents that others may be presenting. Only the imports differ.
import DocumentKit
import Foundation

extension FileManager {
    /// Removes the item at `url` once its presenters have accommodated the deletion.
    public func coordinatedRemoveItem(at url: URL) throws {
        var coordinationError: NSError?
        var removeError: Error?
        NSFileCoordinator(filePresenter: nil).coordinate(
            writingItemAt: url, options: .forDeleting, error: &coordinationError
        ) { url in
            do {
                try self.removeItem(at: url)
            } catch {
                removeError = error
            }
        }
        if let error = coordinationError ?? removeError { throw error }
    }

    /// Moves the item at `source` to `destination`, telling presenters where it went.
    public func coordinatedMoveItem(at source: URL, to destination: URL) throws {
        var coordinationError: NSError?
        var moveError: Error?
        let coordinator = NSFileCoordinator(filePresenter: nil)
        coordinator.coordinate(
            writingItemAt: source, options: .forMoving, writingItemAt: destination, options: .forReplacing,
            error: &coordinationError
        ) { from, to in
            do {
                coordinator.item(at: from, willMoveTo: to)
                try self.moveItem(at: from, to: to)
                coordinator.item(at: from, didMoveTo: to)
            } catch {
                moveError = error
            }
        }
        if let error = coordinationError ?? moveError { throw error }
    }
}
