import Foundation

extension DocumentQuery {
    /// The ubiquity containers a query's items may be in, with the status their agents
    /// published: what gives items their ubiquitous attributes.
    struct UbiquityLookup: Sendable {
        struct Container: Sendable {
            /// The container's root, resolved as query scopes are.
            var root: [UInt8]
            var name: String
            var statusFile: URL
            var status: UbiquityStatus?
            var pending: UbiquityStatus.Pending?
        }

        var containers: [Container] = []

        /// The configured containers and their published status, read now.
        static func load() -> UbiquityLookup {
            let configured = (try? UbiquityConfiguration.load())?.containers ?? []
            return UbiquityLookup(
                containers: configured.map { container in
                    let file = SyncStateFiles.status(forContainer: container.url)
                    let status = UbiquityStatus.read(file)
                    return Container(
                        root: Array(CanonicalPath.of(container.url).utf8), name: container.name,
                        statusFile: file,
                        status: status, pending: status?.pending)
                })
        }

        /// The folder the agents publish their status in, when any container is configured:
        /// from the settings alone, without reading any status.
        static func statusFolder() -> URL? {
            guard let container = (try? UbiquityConfiguration.load())?.containers.first else { return nil }
            return SyncStateFiles.status(forContainer: container.url).deletingLastPathComponent()
        }

        /// The ubiquitous attributes of the item at `path` whose file is `status`, or nil when it
        /// is in no container.
        func attributes(of path: [UInt8], status: FileStatus?) -> Item.Ubiquity? {
            guard
                let container = containers.first(where: {
                    path.count > $0.root.count && DirectoryWatcher.State.isSameOrInside(path, $0.root)
                })
            else { return nil }
            let relative = String(decoding: path[(container.root.count + 1)...], as: UTF8.self)
            let state =
                container.status?.item(relative, status: status, pending: container.pending)
                ?? UbiquityStatus.ItemState(
                    isUploaded: false, isUploading: false, isDownloading: false, isOnServerOnly: status == nil
                )
            return Item.Ubiquity(containerName: container.name, state: state)
        }
    }
}

extension DocumentQuery.Item {
    /// Where an item in a ubiquity container stands with the container's remote.
    public struct Ubiquity: Sendable, Equatable {
        /// The container's name (`NSMetadataUbiquitousItemContainerDisplayNameKey`).
        public var containerName: String
        public var state: UbiquityStatus.ItemState
    }

    /// The value of one of Apple's ubiquitous item attributes, or nil for another key or an
    /// item in no ubiquity container.
    func ubiquitousValue(forAttribute key: String) -> Any? {
        guard let ubiquity else { return key == NSMetadataItemIsUbiquitousKey ? NSNumber(value: false) : nil }
        let state = ubiquity.state
        switch key {
        case NSMetadataItemIsUbiquitousKey: return NSNumber(value: true)
        case NSMetadataUbiquitousItemDownloadingStatusKey:
            if state.isOnServerOnly { return NSMetadataUbiquitousItemDownloadingStatusNotDownloaded }
            return state.isDownloading
                ? NSMetadataUbiquitousItemDownloadingStatusDownloaded
                : NSMetadataUbiquitousItemDownloadingStatusCurrent
        case NSMetadataUbiquitousItemIsDownloadingKey: return NSNumber(value: state.isDownloading)
        case NSMetadataUbiquitousItemIsUploadedKey: return NSNumber(value: state.isUploaded)
        case NSMetadataUbiquitousItemIsUploadingKey: return NSNumber(value: state.isUploading)
        case NSMetadataUbiquitousItemPercentDownloadedKey:
            return state.isDownloading ? NSNumber(value: state.percent ?? 0) : nil
        case NSMetadataUbiquitousItemPercentUploadedKey:
            return state.isUploading
                ? NSNumber(value: state.percent ?? 0) : (state.isUploaded ? NSNumber(value: 100.0) : nil)
        case NSMetadataUbiquitousItemDownloadingErrorKey:
            return state.downloadError.map { Self.syncError(4353, $0) }
        case NSMetadataUbiquitousItemUploadingErrorKey:
            return state.uploadError.map { Self.syncError(4355, $0) }
        case NSMetadataUbiquitousItemDownloadRequestedKey: return NSNumber(value: state.isDownloading)
        case NSMetadataUbiquitousItemIsExternalDocumentKey: return NSNumber(value: false)
        case NSMetadataUbiquitousItemContainerDisplayNameKey: return ubiquity.containerName
        default: return nil
        }
    }

    /// An error as Apple's attributes give them: Cocoa's domain, a ubiquity code
    /// (4353 the file is unavailable, 4355 the server is), and the reason in words.
    private static func syncError(_ code: Int, _ reason: String) -> NSError {
        NSError(domain: NSCocoaErrorDomain, code: code, userInfo: [NSLocalizedDescriptionKey: reason])
    }

    /// The ubiquitous attributes this item has a value for.
    var ubiquitousAttributes: [String] {
        guard let ubiquity else { return [] }
        var names = [
            NSMetadataUbiquitousItemDownloadingStatusKey, NSMetadataUbiquitousItemIsDownloadingKey,
            NSMetadataUbiquitousItemIsUploadedKey, NSMetadataUbiquitousItemIsUploadingKey,
            NSMetadataUbiquitousItemDownloadRequestedKey, NSMetadataUbiquitousItemIsExternalDocumentKey,
            NSMetadataUbiquitousItemContainerDisplayNameKey,
        ]
        if ubiquity.state.isDownloading { names.append(NSMetadataUbiquitousItemPercentDownloadedKey) }
        if ubiquity.state.isUploading || ubiquity.state.isUploaded {
            names.append(NSMetadataUbiquitousItemPercentUploadedKey)
        }
        if ubiquity.state.downloadError != nil { names.append(NSMetadataUbiquitousItemDownloadingErrorKey) }
        if ubiquity.state.uploadError != nil { names.append(NSMetadataUbiquitousItemUploadingErrorKey) }
        return names
    }
}
