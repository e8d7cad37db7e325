// Porting corpus. Source: github.com/nenosinc/iCloudDocumentSync, commit 0b9a1563 (branch
// swift-rewrite), CloudDocumentSync/iCloud.swift (MIT, © 2014 iRare Media; the file by Sam
// Spencer): a singleton iCloud document manager. Written anew with its calls: the container
// looked up off the main thread and its Documents folder made; the identity token and its
// change notification; an NSMetadataQuery over the ubiquitous documents scope filtered by path
// extension, whose gathering and updates run on a serial OperationQueue and download what is
// not local; documents saved, opened and closed with completion handlers; local files moved in
// and out of iCloud with setUbiquitous; a share link; a coordinated deletion through an
// NSFileAccessIntent; a coordinated rename; a local copy compared by date and contents and
// overwritten atomically; and a conflict resolved by keeping a chosen NSFileVersion. Ported
// with its import and the edits Linux forces (`@objc`, `#selector` observers, caller-supplied
// selectors, the security-scoped resource, NSPredicate); two waits for items 5 and 6.
import DocumentKit
import Foundation

public final class CorpusCloudManager: NSObject {
    public weak var delegate: CorpusCloudDelegate?
    public var documentsDirectoryExtension = "Documents"
    public var fileExtension = "*"
    private var ubiquityContainer: URL?
    private let fileManager = FileManager.default
    private let notificationCenter = NotificationCenter.default
    private let query = NSMetadataQuery()
    private let updatesQueue = OperationQueue()
    public private(set) var files: [CorpusCloudFile] = []
    // PORT (Linux): the block observers' tokens, which stand in for the `#selector` observers.
    private var observerTokens: [NSObjectProtocol] = []

    public var suspendUpdates = false {
        didSet { updatesQueue.isSuspended = suspendUpdates }
    }

    public var approximateCloudAvailability: Bool {
        fileManager.ubiquityIdentityToken != nil
    }

    public var localDocumentsURL: URL? {
        fileManager.urls(for: .documentDirectory, in: .userDomainMask).first
    }

    public override init() {
        super.init()
        updatesQueue.maxConcurrentOperationCount = 1
        updatesQueue.qualityOfService = .background
    }

    deinit {
        observerTokens.forEach(notificationCenter.removeObserver)
    }

    /// The container's Documents folder, made when missing; the local Documents folder while
    /// iCloud is unavailable.
    public var ubiquitousDocumentsDirectoryURL: URL? {
        if ubiquityContainer == nil {
            ubiquityContainer = fileManager.url(forUbiquityContainerIdentifier: nil)
        }
        guard let documents = ubiquityContainer?.appendingPathComponent(documentsDirectoryExtension) else {
            return localDocumentsURL
        }
        var isDirectory: ObjCBool = false
        if fileManager.fileExists(atPath: documents.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return documents
        }
        try? fileManager.removeItem(atPath: documents.path)
        try? fileManager.createDirectory(at: documents, withIntermediateDirectories: true, attributes: nil)
        return documents
    }

    // PORT (Linux): `@objc` dropped.
    public func setup(withUbiquityContainer containerID: String?) {
        DispatchQueue.global(qos: .background).async {
            guard let url = self.fileManager.url(forUbiquityContainerIdentifier: containerID) else {
                self.delegate?.availabilityDidChange(
                    toState: false, withUbiquityToken: nil, withUbiquityContainer: nil)
                return
            }
            self.ubiquityContainer = url
            DispatchQueue.main.async {
                let token = self.fileManager.ubiquityIdentityToken
                self.enumerateCloudDocuments()
                // PORT (Linux): a block observer in place of `selector: #selector(checkCloudAvailability)`.
                self.observerTokens.append(
                    self.notificationCenter.addObserver(
                        forName: .NSUbiquityIdentityDidChange, object: nil, queue: nil
                    ) {
                        [weak self] _ in
                        _ = self?.checkCloudAvailability()
                    })
                self.delegate?.iCloudDidFinishInitializing(with: token, with: self.ubiquityContainer)
            }
        }
    }

    // PORT (Linux): `@objc` dropped.
    @discardableResult
    public func checkCloudAvailability() -> Bool {
        if let token: CorpusUbiquityIdentityToken = fileManager.ubiquityIdentityToken {
            delegate?.availabilityDidChange(
                toState: true, withUbiquityToken: token, withUbiquityContainer: ubiquityContainer)
            return true
        }
        delegate?.availabilityDidChange(
            toState: false, withUbiquityToken: nil, withUbiquityContainer: ubiquityContainer)
        return false
    }

    private func enumerateCloudDocuments() {
        query.searchScopes = [NSMetadataQueryUbiquitousDocumentsScope]
        if let extensions = delegate?.iCloudQueryLimitedToFileExtension, !extensions.isEmpty {
            let list = extensions.map { "'" + $0 + "'" }.joined(separator: ",")
            // PORT (Linux): `NSPredicate(format:)` is unavailable in Linux Foundation.
            query.predicate = NSPredicate(
                metadataFormat: "(%K.pathExtension IN { " + list + " })", NSMetadataItemFSNameKey)
        } else {
            // PORT (Linux): as above.
            query.predicate = NSPredicate(
                metadataFormat: "(%K.pathExtension LIKE '" + fileExtension + "')", NSMetadataItemFSNameKey)
        }
        // PORT (Linux): block observers in place of the three `#selector` observers.
        observerTokens.append(
            notificationCenter.addObserver(
                forName: .NSMetadataQueryDidStartGathering, object: query, queue: nil
            ) {
                [weak self] _ in
                guard let self = self else { return }
                DispatchQueue.main.async { self.delegate?.fileUpdateDidBegin() }
            })
        observerTokens.append(
            notificationCenter.addObserver(forName: .NSMetadataQueryDidUpdate, object: query, queue: nil) {
                [weak self] _ in
                self?.updateFiles()
            })
        observerTokens.append(
            notificationCenter.addObserver(
                forName: .NSMetadataQueryDidFinishGathering, object: query, queue: nil
            ) {
                [weak self] _ in
                guard let self = self else { return }
                self.updateFiles()
                DispatchQueue.main.async { self.delegate?.fileUpdateDidEnd() }
            })
        DispatchQueue.main.async {
            if !self.query.start() {
                self.delegate?.availabilityDidChange(
                    toState: false, withUbiquityToken: nil, withUbiquityContainer: nil)
            }
        }
    }

    public func updateFiles() {
        guard approximateCloudAvailability else { return }
        updatesQueue.addOperation {
            let results = self.query.results.compactMap { CorpusMetadataItem($0 as! NSMetadataItem) }
            var current: [CorpusMetadataItem] = []
            for metadata in results {
                #if DOCUMENTKIT_GAP_5  // GAP 5: URLUbiquitousItemDownloadingStatus is missing
                    switch metadata.status {
                    case .current:
                        current.append(metadata)
                    case .notDownloaded:
                        try? FileManager.default.startDownloadingUbiquitousItem(at: metadata.url)
                    default:
                        break
                    }
                #else
                    try? FileManager.default.startDownloadingUbiquitousItem(at: metadata.url)
                    current.append(metadata)
                #endif
            }
            let currentURLs = Set(current.map(\.url))
            DispatchQueue.main.async {
                self.files = self.query.results.compactMap { CorpusMetadataItem($0 as! NSMetadataItem) }
                    .filter { currentURLs.contains($0.url) }
                    .map {
                        CorpusCloudFile(
                            name: $0.name, metadata: $0, content: CorpusCloudDocument(fileURL: $0.url))
                    }
                self.delegate?.filesChanged(self.files)
            }
        }
    }

    /// Saves `content` as document `name`, creating it when missing, and closes it.
    public func saveAndCloseDocument(
        _ name: String, with content: Data, completion: ((UIDocument?, Error?) -> Void)?
    ) {
        guard let fileURL = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name) else {
            completion?(nil, NSError(domain: "Cannot create URL for file.", code: 1, userInfo: nil))
            return
        }
        let document = CorpusCloudDocument(fileURL: fileURL)
        document.contents = content
        document.updateChangeCount(.done)
        let operation: UIDocument.SaveOperation =
            fileManager.fileExists(atPath: fileURL.path) ? .forOverwriting : .forCreating
        document.save(
            to: document.fileURL, for: operation,
            completionHandler: { success in
                guard success else {
                    completion?(document, NSError(domain: "Failed to save.", code: 2, userInfo: nil))
                    return
                }
                document.close(completionHandler: { _ in completion?(document, nil) })
            })
    }

    /// Opens document `name` and hands over its contents.
    public func retrieveCloudDocument(
        _ name: String, completion: @escaping (UIDocument?, Data?, Error?) -> Void
    ) {
        guard let fileURL = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name) else { return }
        let document = CorpusCloudDocument(fileURL: fileURL)
        document.open(completionHandler: { success in
            completion(document, success ? document.contents : nil, nil)
        })
    }

    /// Moves local documents into the container's Documents folder.
    public func uploadLocalDocumentToCloud(_ name: String) throws {
        guard let local = localDocumentsURL?.appendingPathComponent(name),
            let cloud = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name)
        else { return }
        try fileManager.setUbiquitous(true, itemAt: local, destinationURL: cloud)
    }

    /// Moves document `name` out of iCloud into the local Documents folder.
    public func evictCloudDocument(_ name: String) throws {
        guard let local = localDocumentsURL?.appendingPathComponent(name),
            let cloud = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name)
        else { return }
        try fileManager.setUbiquitous(false, itemAt: cloud, destinationURL: local)
    }

    /// A link to document `name` that others can download.
    public func shareDocument(_ name: String, completion: @escaping (URL?, Date?, Error?) -> Void) {
        guard let fileURL = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name) else { return }
        DispatchQueue.global(qos: .background).async {
            var date: NSDate?
            var link: URL?
            var linkError: Error?
            #if DOCUMENTKIT_GAP_6  // GAP 6: FileManager.url(forPublishingUbiquitousItemAt:expiration:) is missing
                do {
                    link = try self.fileManager.url(forPublishingUbiquitousItemAt: fileURL, expiration: &date)
                } catch {
                    linkError = error
                }
            #else
                linkError = CocoaError(.featureUnsupported, userInfo: [NSURLErrorKey: fileURL])
            #endif
            let result = (link, date as Date?, linkError)
            DispatchQueue.main.async { completion(result.0, result.1, result.2) }
        }
    }

    /// Deletes document `name` through a coordinated `.forDeleting` intent.
    public func deleteDocument(_ name: String, completion: ((Error?) -> Void)?) {
        guard let fileURL = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name) else { return }
        // PORT (Linux): no sandbox extensions on Linux (file permissions are the access control);
        // was `fileURL.startAccessingSecurityScopedResource()`, and its stop call below.
        let accessing = true
        let coordinator = NSFileCoordinator(filePresenter: nil)
        let intent = NSFileAccessIntent.writingIntent(with: fileURL, options: .forDeleting)
        coordinator.coordinate(
            with: [intent], queue: OperationQueue(),
            byAccessor: { accessError in
                if let accessError = accessError {
                    completion?(accessError)
                    return
                }
                do {
                    try self.fileManager.removeItem(at: intent.url)
                    completion?(nil)
                } catch {
                    completion?(error)
                }
                if accessing {
                    // PORT (Linux): `fileURL.stopAccessingSecurityScopedResource()` removed (see above).
                }
            })
    }

    /// Renames document `name` with a coordinated move.
    public func renameOriginalDocument(_ name: String, withNewName newName: String) -> Error? {
        guard let fileURL = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name),
            let newFileURL = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(newName)
        else { return nil }
        var coordinatorError: NSError?
        var moveError: Error?
        NSFileCoordinator(filePresenter: nil).coordinate(
            writingItemAt: fileURL, options: .forMoving, writingItemAt: newFileURL, options: .forReplacing,
            error: &coordinatorError,
            byAccessor: { from, to in
                do {
                    try self.fileManager.moveItem(at: from, to: to)
                } catch {
                    moveError = error
                }
            })
        return coordinatorError ?? moveError
    }

    /// Makes the local copy of document `name` agree with the cloud's, the newer winning.
    public func syncLocalCopy(_ name: String) throws {
        guard let local = localDocumentsURL?.appendingPathComponent(name),
            let cloud = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name)
        else { return }
        let document = CorpusCloudDocument(fileURL: cloud)
        guard let cloudDate = document.fileModificationDate,
            let attributes = try? fileManager.attributesOfItem(atPath: local.path),
            let localDate = attributes[FileAttributeKey.modificationDate] as? Date,
            fileManager.contents(atPath: local.path) != nil
        else { return }
        if localDate.compare(cloudDate) == .orderedAscending {
            try document.contents.write(to: local, options: Data.WritingOptions.atomicWrite)
        } else if fileManager.contentsEqual(atPath: cloud.path, andPath: local.path) {
            try fileManager.removeItem(at: local)
        }
    }

    public func isDocumentUbiquitous(_ name: String) -> Bool {
        guard let fileURL = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name) else {
            return false
        }
        return fileManager.isUbiquitousItem(at: fileURL)
    }

    /// The current version of document `name` and all its others.
    public func findUnresolvedConflictingVersionsOfFile(_ name: String) -> [NSFileVersion]? {
        guard let fileURL = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name) else { return nil }
        var versions: [NSFileVersion] = []
        if let current = NSFileVersion.currentVersionOfItem(at: fileURL) {
            versions.append(current)
        }
        if let others = NSFileVersion.otherVersionsOfItem(at: fileURL) {
            versions.append(contentsOf: others)
        }
        return versions
    }

    /// Keeps `documentVersion` of document `name`, the other versions removed.
    public func resolveConflictForFile(_ name: String, with documentVersion: NSFileVersion) {
        guard let fileURL = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name) else { return }
        if documentVersion != NSFileVersion.currentVersionOfItem(at: fileURL) {
            _ = try? documentVersion.replaceItem(at: fileURL, options: [])
        }
        try? NSFileVersion.removeOtherVersionsOfItem(at: fileURL)
        for version in NSFileVersion.unresolvedConflictVersionsOfItem(at: fileURL) ?? [] {
            version.isResolved = true
        }
    }

    /// Observes document `name`'s state.
    // PORT (Linux): the caller passes a block where the source took `observer: Any, selector:
    // Selector` (no selectors without the Objective-C runtime).
    public func observeDocumentState(_ name: String, using block: @escaping @Sendable (Notification) -> Void)
        -> NSObjectProtocol?
    {
        guard let fileURL = ubiquitousDocumentsDirectoryURL?.appendingPathComponent(name),
            fileManager.fileExists(atPath: fileURL.path)
        else { return nil }
        let document = CorpusCloudDocument(fileURL: fileURL)
        return notificationCenter.addObserver(
            forName: UIDocument.stateChangedNotification, object: document, queue: nil, using: block)
    }
}
