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
            /// The downloads apps asked of the agent.
            var requested: Set<String> = []
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
                        status: status, pending: status?.pending,
                        requested: UbiquityDownloadRequests(forContainer: container.url).load())
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
            let state = UbiquityStatus.itemState(
                relative, published: container.status, status: status, pending: container.pending,
                requested: container.requested)
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
        case NSMetadataUbiquitousItemDownloadingStatusKey: return state.downloadingStatus.metadataValue
        case NSMetadataUbiquitousItemIsDownloadingKey: return NSNumber(value: state.isDownloading)
        case NSMetadataUbiquitousItemIsUploadedKey: return NSNumber(value: state.isUploaded)
        case NSMetadataUbiquitousItemIsUploadingKey: return NSNumber(value: state.isUploading)
        case NSMetadataUbiquitousItemPercentDownloadedKey:
            return state.isDownloading ? NSNumber(value: state.percent ?? 0) : nil
        case NSMetadataUbiquitousItemPercentUploadedKey:
            return state.isUploading
                ? NSNumber(value: state.percent ?? 0) : (state.isUploaded ? NSNumber(value: 100.0) : nil)
        case NSMetadataUbiquitousItemDownloadingErrorKey: return state.downloadingError
        case NSMetadataUbiquitousItemUploadingErrorKey: return state.uploadingError
        case NSMetadataUbiquitousItemDownloadRequestedKey: return NSNumber(value: state.isDownloadRequested)
        case NSMetadataUbiquitousItemIsExternalDocumentKey: return NSNumber(value: false)
        case NSMetadataUbiquitousItemContainerDisplayNameKey: return ubiquity.containerName
        default: return nil
        }
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

extension DocumentQuery.Model {
    /// The document a placeholder's file name stands for (`.NAME.icloud` → `NAME`).
    static func placeholderDocumentName(_ name: [UInt8]) -> [UInt8]? {
        guard name.first == UInt8(ascii: "."), name.count > 8, name.suffix(7).elementsEqual(".icloud".utf8),
            let document = UbiquityPlaceholder.documentName(
                forPlaceholderName: String(decoding: name, as: UTF8.self))
        else { return nil }
        return Array(document.utf8)
    }

    /// The document at `path` as its placeholder shows it, when the document is kept on the
    /// server only in a ubiquity container: the placeholder's status with the document's size.
    func placeholderFound(_ path: [UInt8]) -> Found? {
        guard ubiquity.attributes(of: path, status: nil) != nil,
            let slash = path.lastIndex(of: UInt8(ascii: "/"))
        else { return nil }
        let placeholderPath =
            Array(path[...slash]) + Array(".".utf8) + path[(slash + 1)...] + Array(".icloud".utf8)
        guard
            case .success(var status) = Syscall.withCString(
                placeholderPath, { Syscall.fileStatus(AT_FDCWD, $0, followingLinks: false) }),
            status.isRegularFile,
            let placeholder = UbiquityPlaceholder(
                contentsOf: URL(fileURLWithPath: String(decoding: placeholderPath, as: UTF8.self)))
        else { return nil }
        status.size = placeholder.size
        return Found(path: path, status: status, isPackage: false, isPlaceholder: true)
    }
}

extension DocumentQuery.Item {
    /// What the model found of this item, to make it again.
    var found: DocumentQuery.Model.Found {
        DocumentQuery.Model.Found(
            path: fileSystemPath, status: status, isPackage: isPackage,
            isPlaceholder: ubiquity?.state.isOnServerOnly ?? false)
    }
}

extension DocumentQuery.Model {
    /// The document the placeholder at `path` stands for, if `path` is a placeholder's.
    static func documentPath(forPlaceholderAt path: [UInt8]) -> [UInt8]? {
        guard let slash = path.lastIndex(of: UInt8(ascii: "/")),
            let document = placeholderDocumentName(Array(path[(slash + 1)...]))
        else { return nil }
        return DirectoryWatcher.State.join(Array(path[..<slash]), document)
    }

    /// A placeholder came, changed, went or was renamed into place: the document it stands
    /// for is read again. Returns whether the event was a placeholder's (and is handled).
    mutating func applyToPlaceholders(_ event: DirectoryWatcher.Event) -> Bool {
        var endpoints = [event.fileSystemPath]
        if case .moved = event.kind, let previous = event.previousFileSystemPath {
            endpoints.append(previous)
        }
        if case .overflow = event.kind { return false }
        let documents = endpoints.map(Self.documentPath(forPlaceholderAt:))
        guard documents.contains(where: { $0 != nil }) else { return false }
        for (endpoint, document) in zip(endpoints, documents) {
            // The other end of a rename that is not a placeholder: an item as any other.
            let path = document ?? endpoint
            if case .item = locate(path) { refresh(path, force: false) }
        }
        return true
    }
}
