// swift-format-ignore-file: AlwaysUseLowerCamelCase
// Apple's global names (NSMetadataQuery…, NSUbiquity…, NSUndoManager…) are the porting contract.

import Foundation

#if !canImport(Darwin)
    extension Notification.Name {
        /// Apple's notification that the iCloud account changed, so that code observing it
        /// compiles. DocumentKit does not post it yet: compare `ubiquityIdentityToken` with
        /// the one kept from the last launch, as Apple also advises.
        public static let NSUbiquityIdentityDidChange = Notification.Name(
            "NSUbiquityIdentityDidChangeNotification")
    }

    /// Apple's ubiquity API, over the containers of ``UbiquityConfiguration``: what an app that
    /// keeps its documents in iCloud calls, with Apple's names and meanings.
    extension FileManager {
        /// The root of the ubiquity container `containerIdentifier` (the first configured
        /// container when nil), created if it is missing; nil when no such container is
        /// configured, as on a device signed out of iCloud.
        ///
        /// As on Apple's platforms, do not call it on the main thread: it may start the
        /// container's sync agent (see ``UbiquityAgent``).
        ///
        /// ```swift
        /// guard let container = FileManager.default.url(forUbiquityContainerIdentifier: nil) else {
        ///     return  // sync is not set up: keep documents locally
        /// }
        /// let documents = container.appendingPathComponent("Documents", isDirectory: true)
        /// ```
        public func url(forUbiquityContainerIdentifier containerIdentifier: String?) -> URL? {
            guard let configuration = try? UbiquityConfiguration.load(),
                let container = configuration.container(identifier: containerIdentifier)
            else { return nil }
            let url = container.url
            if !fileExists(atPath: url.path) {
                guard (try? createDirectory(at: url, withIntermediateDirectories: true)) != nil else {
                    return nil
                }
            }
            UbiquityAgent.startIfNeeded(for: container, configuration: configuration)
            return url
        }

        /// A token for the account sync runs under, nil when no container is configured. It
        /// stays the same while any container is configured and changes when sync is set up
        /// again after every container was removed: compare it with the one kept from the
        /// last launch to learn that the account changed.
        public var ubiquityIdentityToken: (any NSCoding & NSCopying & NSObjectProtocol)? {
            guard let token = (try? UbiquityConfiguration.load())?.identityToken else { return nil }
            return NSString(string: token)
        }

        /// Whether the item at `url` is in a ubiquity container (and so is synced), including
        /// a document kept only on the server.
        public func isUbiquitousItem(at url: URL) -> Bool {
            guard url.isFileURL, let configuration = try? UbiquityConfiguration.load(),
                configuration.container(holding: url) != nil
            else { return false }
            return fileExists(atPath: url.path)
                || fileExists(atPath: UbiquityPlaceholder.placeholderURL(for: url).path)
        }

        /// Moves the item at `url` into a ubiquity container (`flag` true, `destinationURL`
        /// inside a container) or out of one (`flag` false, `destinationURL` outside every
        /// container), as one coordinated move: presenters of the item follow it, and an open
        /// document keeps its unsaved changes.
        ///
        /// As on Apple's platforms, never call it on the main thread.
        ///
        /// - Throws: `CocoaError` as Apple's does: `.fileNoSuchFile` when nothing is at
        ///   `url`, `.fileWriteFileExists` when something is at `destinationURL` (nothing
        ///   moves), `.fileWriteUnknown` with an explanation when `destinationURL` is not on the
        ///   side `flag` asks for or no container is configured.
        public func setUbiquitous(_ flag: Bool, itemAt url: URL, destinationURL: URL) throws {
            let configuration = try UbiquityConfiguration.load()
            let destinationContainer = configuration.container(holding: destinationURL)
            if flag != (destinationContainer != nil) {
                let reason =
                    flag
                    ? (configuration.containers.isEmpty
                        ? "no ubiquity container is configured (docs remote add NAME URL)"
                        : "\(destinationURL.path) is not in a ubiquity container")
                    : "\(destinationURL.path) is in the ubiquity container “\(destinationContainer?.name ?? "")”"
                throw CocoaError(
                    .fileWriteUnknown,
                    userInfo: [
                        NSFilePathErrorKey: url.path, NSURLErrorKey: destinationURL,
                        NSLocalizedDescriptionKey:
                            "cannot move \(url.path) \(flag ? "into" : "out of") iCloud: \(reason)",
                    ])
            }
            guard fileExists(atPath: url.path) else {
                throw CocoaError(
                    .fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path, NSURLErrorKey: url])
            }
            if fileExists(atPath: destinationURL.path) {
                throw CocoaError(
                    .fileWriteFileExists,
                    userInfo: [NSFilePathErrorKey: destinationURL.path, NSURLErrorKey: destinationURL])
            }
            try createDirectory(
                at: destinationURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            let coordinator = FileCoordinator(filePresenter: nil)
            do {
                try coordinator.coordinate(
                    writingItemAt: url, options: .forMoving, writingItemAt: destinationURL,
                    options: .forReplacing
                ) { from, to in
                    coordinator.item(at: from, willMoveTo: to)
                    try SafeSave.moveItem(at: from, to: to, operation: "move the item")
                    coordinator.item(at: from, didMoveTo: to)
                }
            } catch let error as DocumentKitError where error.code == .fileExists {
                throw CocoaError(
                    .fileWriteFileExists,
                    userInfo: [NSFilePathErrorKey: destinationURL.path, NSURLErrorKey: destinationURL])
            }
            if let destinationContainer {
                UbiquityAgent.startIfNeeded(for: destinationContainer, configuration: configuration)
            }
        }
    }
#endif
