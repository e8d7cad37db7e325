// Porting corpus. Source: github.com/kingdomseed/icloud_storage_plus, commit f8c58dc2,
// ios/icloud_storage_plus/Sources/icloud_storage_plus_foundation/DownloadWaiter.swift
// (MIT, © 2021 Dean Yuan; the file by Jason Holt). Written anew with its calls: an
// NSMetadataQuery over both ubiquitous scopes for one path, on the main queue, whose gathering
// and update notifications (block observers, queue: the query's) read the item's download
// percentage and the URL's downloading status and error, with a Timer as an idle watchdog.
// Ported with its import and one Linux edit (NSPredicate); the downloading status waits for
// item 5.
import DocumentKit
import Foundation

public let corpusMetadataQueryScopes: [String] = [
    NSMetadataQueryUbiquitousDataScope,
    NSMetadataQueryUbiquitousDocumentsScope,
]

/// Whether the download of `fileURL` is over, and how, as the query and the URL tell it.
public func corpusDownloadStatus(query: NSMetadataQuery, fileURL: URL) -> (completed: Bool, error: Error?) {
    let resolvedURL =
        (query.results.first as? NSMetadataItem)
        .flatMap { $0.value(forAttribute: NSMetadataItemURLKey) as? URL } ?? fileURL
    guard
        let values = try? resolvedURL.resourceValues(forKeys: [
            .ubiquitousItemDownloadingStatusKey, .ubiquitousItemDownloadingErrorKey,
        ])
    else { return (false, nil) }
    if let error = values.ubiquitousItemDownloadingError {
        return (true, error)
    }
    #if DOCUMENTKIT_GAP_5  // GAP 5: URLResourceValues.ubiquitousItemDownloadingStatus is missing
        if values.ubiquitousItemDownloadingStatus == .current {
            return (true, nil)
        }
    #endif
    return (false, nil)
}

/// Watches one item's download until it completes or stays idle for `idleTimeout` seconds.
/// Call on the main thread; `completion` is called there once.
public final class CorpusDownloadWaiter {
    private let query = NSMetadataQuery()
    private var observers: [NSObjectProtocol] = []
    private var watchdog: Timer?
    private var lastProgress = -1.0
    private var completion: ((Error?) -> Void)?

    public init() {}

    public func wait(for fileURL: URL, idleTimeout: TimeInterval, completion: @escaping (Error?) -> Void) {
        self.completion = completion
        query.operationQueue = .main
        query.searchScopes = corpusMetadataQueryScopes
        // PORT (Linux): `NSPredicate(format:)` is unavailable in Linux Foundation (no key-value
        // coding); DocumentKit evaluates the same grammar over the item's attributes.
        query.predicate = NSPredicate(metadataFormat: "%K == %@", NSMetadataItemPathKey, fileURL.path)

        observers.append(
            NotificationCenter.default.addObserver(
                forName: .NSMetadataQueryDidFinishGathering, object: query, queue: query.operationQueue
            ) { [weak self] _ in
                self?.evaluate(fileURL, idleTimeout: idleTimeout)
            })
        observers.append(
            NotificationCenter.default.addObserver(
                forName: .NSMetadataQueryDidUpdate, object: query, queue: query.operationQueue
            ) { [weak self] _ in
                self?.evaluate(fileURL, idleTimeout: idleTimeout)
            })
        resetWatchdog(idleTimeout)
        query.start()
    }

    private func evaluate(_ fileURL: URL, idleTimeout: TimeInterval) {
        let status = corpusDownloadStatus(query: query, fileURL: fileURL)
        if status.completed {
            finish(status.error)
            return
        }
        if let item = query.results.first as? NSMetadataItem,
            let progress = item.value(forAttribute: NSMetadataUbiquitousItemPercentDownloadedKey) as? Double,
            progress > lastProgress
        {
            lastProgress = progress
            resetWatchdog(idleTimeout)
        }
    }

    private func resetWatchdog(_ idleTimeout: TimeInterval) {
        watchdog?.invalidate()
        watchdog = Timer.scheduledTimer(withTimeInterval: idleTimeout, repeats: false) { [weak self] _ in
            self?.finish(NSError(domain: "CorpusDownloadWaiter", code: 1, userInfo: nil))
        }
    }

    private func finish(_ error: Error?) {
        watchdog?.invalidate()
        watchdog = nil
        observers.forEach(NotificationCenter.default.removeObserver)
        observers.removeAll()
        query.stop()
        completion?(error)
        completion = nil
    }
}
