import Foundation

#if canImport(Glibc)
    import Glibc
#endif

#if !canImport(Darwin)
    /// Download on demand: documents kept on the server only, with a placeholder
    /// (`.NAME.icloud`, see ``UbiquityPlaceholder``) standing for each here.
    extension FileManager {
        /// Removes the local copy of the document at `url` (or of every document in the folder
        /// at `url`), leaving it on the server only, with a placeholder the query and `docs
        /// list` show with its size. `startDownloadingUbiquitousItem(at:)`, or opening the
        /// document, brings it back.
        ///
        /// Only a document whose bytes here are the ones its agent last synced is evicted:
        /// one with changes not yet uploaded stays, and this throws. Open documents are asked
        /// to save first (a coordinated write), so an unsaved change also keeps it here. As on
        /// Apple's platforms, do not call it inside a coordinated write of your own.
        ///
        /// - Throws: `CocoaError` as Apple's does: `.fileNoSuchFile` when nothing (not even a
        ///   placeholder) is at `url`, `.ubiquitousFileUnavailable` with the reason when the
        ///   item is in no ubiquity container or is not uploaded yet.
        public func evictUbiquitousItem(at url: URL) throws {
            let container = try Self.ubiquityContainer(holding: url, operation: "evict")
            guard let status = FileStatus(path: url.path, followingLinks: false) else {
                if fileExists(atPath: UbiquityPlaceholder.placeholderURL(for: url).path) { return }
                throw CocoaError(
                    .fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path, NSURLErrorKey: url])
            }
            if status.isDirectory {
                let names = try contentsOfDirectory(atPath: url.path).filter { !$0.hasPrefix(".") }
                for name in names.sorted() { try evictUbiquitousItem(at: url.appendingPathComponent(name)) }
                return
            }
            let relative = Self.relativePath(of: url, in: container)
            try Self.requireUploaded(url, relative: relative, container: container, status: status)
            let coordinator = FileCoordinator(filePresenter: nil)
            try coordinator.coordinate(writingItemAt: url, options: []) { url in
                // Open documents saved what they held: only the bytes last synced are evicted.
                guard let now = FileStatus(path: url.path, followingLinks: false) else { return }
                try Self.requireUploaded(url, relative: relative, container: container, status: now)
                let placeholder = UbiquityPlaceholder(
                    name: url.lastPathComponent, size: now.size, path: relative)
                // The placeholder first: a crash between the two leaves both, which reads as
                // the document here (the placeholder is then removed), never as a deletion.
                try SafeSave.write(
                    try placeholder.encoded(), to: UbiquityPlaceholder.placeholderURL(for: url))
                _ = try Syscall.unlinkat(AT_FDCWD, url.path).get("evict", url)
                try FileDescriptor.openDirectory(
                    url.deletingLastPathComponent(), operation: "flush the folder of"
                )
                .sync(operation: "flush (fsync) the folder of")
            }
            UbiquityAgent.wake(forContainerAt: container.url)
        }

        /// Starts downloading the document at `url` that is kept on the server only: the
        /// container's agent fetches it and replaces its placeholder with it (the query's
        /// downloading attributes show how far it is). Returns at once; nothing to do for a
        /// document already here.
        ///
        /// - Throws: `CocoaError`: `.fileNoSuchFile` when neither the document nor its
        ///   placeholder is at `url`, `.ubiquitousFileUnavailable` when `url` is in no ubiquity
        ///   container.
        public func startDownloadingUbiquitousItem(at url: URL) throws {
            let container = try Self.ubiquityContainer(holding: url, operation: "download")
            if fileExists(atPath: url.path) { return }
            guard fileExists(atPath: UbiquityPlaceholder.placeholderURL(for: url).path) else {
                throw CocoaError(
                    .fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path, NSURLErrorKey: url])
            }
            do {
                try UbiquityDownloadRequests(forContainer: container.url).add([
                    Self.relativePath(of: url, in: container)
                ])
            } catch {
                throw CocoaError(
                    .fileWriteUnknown,
                    userInfo: [
                        NSFilePathErrorKey: url.path, NSURLErrorKey: url,
                        NSLocalizedDescriptionKey: "cannot ask for \(url.path) to be downloaded: \(error)",
                    ])
            }
            if let configuration = try? UbiquityConfiguration.load() {
                UbiquityAgent.startIfNeeded(for: container, configuration: configuration)
            }
            UbiquityAgent.wake(forContainerAt: container.url)
        }

        /// The container holding `url`, or Apple's error for an item in none.
        private static func ubiquityContainer(holding url: URL, operation: String) throws -> UbiquityContainer
        {
            guard url.isFileURL, let container = try? UbiquityConfiguration.load().container(holding: url)
            else {
                throw unavailable(url, "cannot \(operation) \(url.path): it is in no ubiquity container")
            }
            return container
        }

        /// `url`'s path in `container`, as the agent's status and requests name it.
        static func relativePath(of url: URL, in container: UbiquityContainer) -> String {
            let root = CanonicalPath.of(container.url)
            let folder = CanonicalPath.of(url.deletingLastPathComponent())
            let inside = folder == root ? "" : String(folder.dropFirst(root.count + 1)) + "/"
            return inside + url.lastPathComponent
        }

        /// Throws unless the agent's status records the file at `url` as synced at `status`.
        private static func requireUploaded(
            _ url: URL, relative: String, container: UbiquityContainer, status: FileStatus
        ) throws {
            let published = UbiquityStatus.read(SyncStateFiles.status(forContainer: container.url))
            guard let published, published.synced[relative] == UbiquityStatus.record(of: status),
                !published.uploading.contains(relative)
            else {
                throw unavailable(
                    url,
                    "cannot evict \(url.path): its changes are not uploaded yet; sync first (docs sync), then evict"
                )
            }
        }

        private static func unavailable(_ url: URL, _ reason: String) -> CocoaError {
            CocoaError(
                .ubiquitousFileUnavailable,
                userInfo: [
                    NSFilePathErrorKey: url.path, NSURLErrorKey: url, NSLocalizedDescriptionKey: reason,
                ])
        }
    }
#endif
