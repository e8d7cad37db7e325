// The model behind a document browser, as iCloud document apps on iPhone and Mac write it in
// Swift 6: an NSMetadataQuery over the app's documents folder, filtered by a predicate and
// sorted by a sort descriptor, read on the main queue when it finishes gathering and at each
// update, with a badge for documents in conflict. Only the imports differ from the Apple code
// (`import UIKit` there), and, where Foundation on Linux has no key-value coding, one word:
// `NSPredicate(format:)` is `NSPredicate(metadataFormat:)` and `NSSortDescriptor(key:)` is
// `NSSortDescriptor(metadataKey:)` (see docs/Porting.md).
import DocumentKit
import Foundation

@MainActor
public final class DocumentBrowser {
    public struct Row: Equatable, Sendable {
        public var name: String
        public var inConflict: Bool
    }

    public private(set) var rows: [Row] = []
    /// How many times the rows were rebuilt (at the end of gathering and at each update).
    public private(set) var refreshes = 0
    private let query = NSMetadataQuery()
    private var observers: [NSObjectProtocol] = []

    public init(folder: URL, fileExtension: String) {
        query.searchScopes = [folder]
        query.predicate = NSPredicate(
            metadataFormat: "%K LIKE %@", NSMetadataItemFSNameKey, "*.\(fileExtension)")
        query.sortDescriptors = [NSSortDescriptor(metadataKey: NSMetadataItemFSNameKey, ascending: true)]
        query.operationQueue = .main
        let center = NotificationCenter.default
        for name in [Notification.Name.NSMetadataQueryDidFinishGathering, .NSMetadataQueryDidUpdate] {
            observers.append(
                center.addObserver(forName: name, object: query, queue: .main) { [weak self] _ in
                    MainActor.assumeIsolated { self?.queryDidChange() }
                })
        }
    }

    @discardableResult
    public func start() -> Bool { query.start() }

    public func stop() {
        query.stop()
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
        observers = []
    }

    /// The URL of the row named `name`, from the query's own item.
    public func url(ofDocumentNamed name: String) -> URL? {
        for index in 0..<query.resultCount {
            guard let item = query.result(at: index) as? NSMetadataItem,
                item.value(forAttribute: NSMetadataItemFSNameKey) as? String == name
            else { continue }
            return item.value(forAttribute: NSMetadataItemURLKey) as? URL
        }
        return nil
    }

    private func queryDidChange() {
        query.disableUpdates()
        defer { query.enableUpdates() }
        let items = query.results as? [NSMetadataItem] ?? []
        rows = items.compactMap { item in
            guard let name = item.value(forAttribute: NSMetadataItemFSNameKey) as? String else { return nil }
            let conflicts =
                item.value(forAttribute: NSMetadataUbiquitousItemHasUnresolvedConflictsKey) as? NSNumber
            return Row(name: name, inConflict: conflicts?.boolValue ?? false)
        }
        refreshes += 1
    }
}
