// An iCloud notes app's model, as iPhone apps write it in Swift 6: notes are UIDocuments in
// the app's ubiquity container (`Documents` in it), listed by an NSMetadataQuery over the
// ubiquitous documents scope with each note's download and upload status, a local note moved
// into iCloud with setUbiquitous off the main thread, conflicts resolved by keeping the
// current version, and the font size kept in NSUbiquitousKeyValueStore and updated when
// another device changes it. Only the imports differ from the Apple code (`import UIKit`
// there).
import DocumentKit
import Foundation

public final class NoteDocument: UIDocument {
    public var text = ""

    public override func contents(forType typeName: String) throws -> Any {
        Data(text.utf8)
    }

    public override func load(fromContents contents: Any, ofType typeName: String?) throws {
        guard let data = contents as? Data else { throw CocoaError(.fileReadCorruptFile) }
        text = String(decoding: data, as: UTF8.self)
    }
}

@MainActor
public final class CloudNotes {
    public struct Note: Equatable, Sendable {
        public var name: String
        public var downloadingStatus: String?
        public var isUploaded: Bool
        public var isDownloading: Bool
        public var hasConflicts: Bool
    }

    public private(set) var notes: [Note] = []
    public private(set) var fontSize: Double
    /// How many times the list was rebuilt.
    public private(set) var refreshes = 0
    public let documentsURL: URL
    private let query = NSMetadataQuery()
    private let settings: NSUbiquitousKeyValueStore
    private var observers: [NSObjectProtocol] = []

    /// Nil when iCloud is off: the app then keeps its notes on the device.
    public init?(settings: NSUbiquitousKeyValueStore = .default) {
        guard let container = FileManager.default.url(forUbiquityContainerIdentifier: nil) else { return nil }
        documentsURL = container.appendingPathComponent("Documents", isDirectory: true)
        self.settings = settings
        let stored = settings.double(forKey: "fontSize")
        fontSize = stored > 0 ? stored : 17
        query.searchScopes = [NSMetadataQueryUbiquitousDocumentsScope]
        query.operationQueue = .main
        let center = NotificationCenter.default
        for name in [Notification.Name.NSMetadataQueryDidFinishGathering, .NSMetadataQueryDidUpdate] {
            observers.append(
                center.addObserver(forName: name, object: query, queue: .main) { [weak self] _ in
                    MainActor.assumeIsolated { self?.queryDidChange() }
                })
        }
        observers.append(
            center.addObserver(
                forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: settings,
                queue: .main
            ) { [weak self] note in
                let keys = note.userInfo?[NSUbiquitousKeyValueStoreChangedKeysKey] as? [String] ?? []
                MainActor.assumeIsolated {
                    guard let self, keys.contains("fontSize") else { return }
                    self.fontSize = self.settings.double(forKey: "fontSize")
                }
            })
        settings.synchronize()
    }

    @discardableResult
    public func start() -> Bool { query.start() }

    public func stop() {
        query.stop()
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
        observers = []
    }

    public func setFontSize(_ size: Double) {
        fontSize = size
        settings.set(size, forKey: "fontSize")
        settings.synchronize()
    }

    /// Creates a note in iCloud.
    public func createNote(named name: String, text: String) async -> NoteDocument? {
        let url = documentsURL.appendingPathComponent("\(name).note")
        let document = NoteDocument(fileURL: url)
        document.text = text
        return await document.save(to: url, for: .forCreating) ? document : nil
    }

    /// Moves a note kept on the device into iCloud, off the main thread as Apple asks.
    public func moveToCloud(_ localURL: URL) async throws -> URL {
        let destination = documentsURL.appendingPathComponent(localURL.lastPathComponent)
        try await Task.detached {
            try FileManager.default.setUbiquitous(true, itemAt: localURL, destinationURL: destination)
        }.value
        return destination
    }

    /// Frees the space a note takes on this device: it stays in iCloud, listed as not
    /// downloaded. Off the main thread, as Apple asks.
    public func evict(_ url: URL) async throws {
        try await Task.detached {
            try FileManager.default.evictUbiquitousItem(at: url)
        }.value
    }

    /// Opens a note; one kept in iCloud only is downloaded first.
    public func open(_ url: URL) async -> NoteDocument? {
        let document = NoteDocument(fileURL: url)
        return await document.open() ? document : nil
    }

    /// Keeps what the document shows and marks every conflict resolved, as most apps do.
    public static func resolveConflicts(of document: UIDocument) throws {
        for version in NSFileVersion.unresolvedConflictVersionsOfItem(at: document.fileURL) ?? [] {
            version.isResolved = true
        }
        try NSFileVersion.removeOtherVersionsOfItem(at: document.fileURL)
    }

    private func queryDidChange() {
        query.disableUpdates()
        defer { query.enableUpdates() }
        var notes: [Note] = []
        for index in 0..<query.resultCount {
            guard let item = query.result(at: index) as? NSMetadataItem,
                let name = item.value(forAttribute: NSMetadataItemFSNameKey) as? String,
                name.hasSuffix(".note")
            else { continue }
            notes.append(
                Note(
                    name: name,
                    downloadingStatus: item.value(forAttribute: NSMetadataUbiquitousItemDownloadingStatusKey)
                        as? String,
                    isUploaded: (item.value(forAttribute: NSMetadataUbiquitousItemIsUploadedKey) as? NSNumber)?
                        .boolValue ?? false,
                    isDownloading: (item.value(forAttribute: NSMetadataUbiquitousItemIsDownloadingKey)
                        as? NSNumber)?
                        .boolValue ?? false,
                    hasConflicts: (item.value(forAttribute: NSMetadataUbiquitousItemHasUnresolvedConflictsKey)
                        as? NSNumber)?.boolValue ?? false))
        }
        self.notes = notes.sorted { $0.name < $1.name }
        refreshes += 1
    }
}
