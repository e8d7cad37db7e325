import Foundation

#if !canImport(Darwin)
    /// Apple's values of the `ubiquitousItemDownloadingStatusKey` resource key, which Foundation
    /// on Linux does not declare: whether a local copy of an item of a ubiquity container exists,
    /// and whether it is the latest.
    ///
    /// For example:
    ///
    /// ```swift
    /// let values = try url.resourceValues(forKeys: [.ubiquitousItemDownloadingStatusKey])
    /// if values.ubiquitousItemDownloadingStatus != .current {
    ///     try FileManager.default.startDownloadingUbiquitousItem(at: url)
    /// }
    /// ```
    public struct URLUbiquitousItemDownloadingStatus: RawRepresentable, Hashable, Sendable {
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }

        /// A local copy of this item exists and is the most up-to-date version known to the
        /// device.
        public static let current = Self(
            rawValue: UbiquityStatus.ItemState.DownloadingStatus.current.urlResourceValue)
        /// A local copy of this item exists, but it is stale: the most recent version will be
        /// downloaded as soon as possible.
        public static let downloaded = Self(
            rawValue: UbiquityStatus.ItemState.DownloadingStatus.downloaded.urlResourceValue)
        /// This item has not been downloaded yet: `startDownloadingUbiquitousItem(at:)`
        /// downloads it.
        public static let notDownloaded = Self(
            rawValue: UbiquityStatus.ItemState.DownloadingStatus.notDownloaded.urlResourceValue)
    }

    extension URLResourceValues {
        /// The download status of the item (`ubiquitousItemDownloadingStatusKey`), which Foundation
        /// on Linux does not declare; nil unless that key was asked for and the item is in a
        /// ubiquity container.
        public var ubiquitousItemDownloadingStatus: URLUbiquitousItemDownloadingStatus? {
            (allValues[.ubiquitousItemDownloadingStatusKey] as? String).map(
                URLUbiquitousItemDownloadingStatus.init)
        }
    }

    extension URL {
        /// The resource values for `keys`, with Apple's values for the ubiquitous keys
        /// (`isUbiquitousItemKey`, `ubiquitousItemDownloadingStatusKey`,
        /// `ubiquitousItemIsUploadedKey`, ...), which Foundation on Linux never answers; every
        /// other key is Foundation's.
        ///
        /// The ubiquitous values come from the status the container's sync agent published, as
        /// the query's ubiquitous attributes do: an item saved since its last sync is not
        /// uploaded at once; one outside every ubiquity container is not ubiquitous and has no
        /// other ubiquitous value.
        ///
        /// This is Apple's `resourceValues(forKeys:)` for the call as it is usually written, with
        /// the keys in an array literal; Foundation's own, which takes a `Set`, is still the one
        /// a `Set` held in a variable reaches, and it answers nil for the ubiquitous keys. Pass
        /// such keys as `Array(keys)`, or call ``promisedItemResourceValues(forKeys:)`` (see
        /// docs/Porting.md).
        ///
        /// - Throws: Foundation's errors; `CocoaError(.fileReadNoSuchFile)` when a ubiquitous key
        ///   is asked for and nothing is at the URL (a document kept on the server only: ask
        ///   ``promisedItemResourceValues(forKeys:)``, as on Apple's platforms).
        public func resourceValues(forKeys keys: [URLResourceKey]) throws -> URLResourceValues {
            try URLResourceValues.combining(keys, of: self, promised: false)
        }

        /// The resource values of a promised item: one that may be kept on the server only,
        /// with a placeholder here. Behaves as `resourceValues(forKeys:)` for an item that is
        /// here; for one on the server only it answers from the placeholder: the document's
        /// name, size and type (`nameKey`, `fileSizeKey`, `isRegularFileKey`,
        /// `fileResourceTypeKey`, ...) and the ubiquitous keys (`.notDownloaded`), with no
        /// value for what the placeholder does not hold (dates, for one).
        ///
        /// Apple's documentation has apps read a promised item's values inside a coordinated
        /// read with `.immediatelyAvailableMetadataOnly`, which does not download it:
        ///
        /// ```swift
        /// NSFileCoordinator(filePresenter: nil).coordinate(
        ///     readingItemAt: url, options: .immediatelyAvailableMetadataOnly, error: &error
        /// ) { url in
        ///     let values = try? url.promisedItemResourceValues(forKeys: [.fileSizeKey])
        /// }
        /// ```
        ///
        /// - Throws: `CocoaError(.fileReadNoSuchFile)` when neither the item nor a placeholder
        ///   of it is at the URL; Foundation's errors for an item that is here.
        public func promisedItemResourceValues(forKeys keys: Set<URLResourceKey>) throws -> URLResourceValues
        {
            try URLResourceValues.combining(Array(keys), of: self, promised: true)
        }

        /// Whether the promised item at the URL is here or kept on the server only with a
        /// placeholder here.
        ///
        /// - Throws: `CocoaError(.fileReadNoSuchFile)` when it is neither.
        public func checkPromisedItemIsReachable() throws -> Bool {
            try (self as NSURL).checkPromisedItemIsReachable()
        }
    }

    extension NSURL {
        /// ``URL/promisedItemResourceValues(forKeys:)`` for one key: sets `value` to the key's
        /// value (an object: `NSNumber`, `NSString`, `NSError`, `NSDate`), or to nil when the
        /// item has none. Apple's `AutoreleasingUnsafeMutablePointer` is an `UnsafeMutablePointer`
        /// here; `&value` passes either.
        public func getPromisedItemResourceValue(
            _ value: UnsafeMutablePointer<AnyObject?>, forKey key: URLResourceKey
        ) throws {
            let values = try URLResourceValues.combining([key], of: self as URL, promised: true)
            value.pointee = values.allValues[key].map(Self.object(for:))
        }

        /// ``URL/promisedItemResourceValues(forKeys:)`` as `NSURL` gives it: a dictionary of the
        /// values found.
        public func promisedItemResourceValues(forKeys keys: [URLResourceKey]) throws -> [URLResourceKey: Any]
        {
            try URLResourceValues.combining(keys, of: self as URL, promised: true).allValues
        }

        /// Whether the promised item is here or kept on the server only with a placeholder here.
        ///
        /// - Throws: `CocoaError(.fileReadNoSuchFile)` when it is neither.
        public func checkPromisedItemIsReachable() throws -> Bool {
            let url = self as URL
            let manager = FileManager.default
            guard
                manager.fileExists(atPath: url.path)
                    || manager.fileExists(atPath: UbiquityPlaceholder.placeholderURL(for: url).path)
            else { throw URLResourceValues.noSuchItem(url) }
            return true
        }

        /// A value as an object: what an `AnyObject?` out-parameter holds on Apple's platforms.
        private static func object(for value: Any) -> AnyObject {
            switch value {
            case let object as NSObject: return object
            case let string as String: return NSString(string: string)
            case let number as Int: return NSNumber(value: number)
            case let number as Int64: return NSNumber(value: number)
            case let flag as Bool: return NSNumber(value: flag)
            case let date as Date:
                return NSDate(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate)
            case let url as URL: return url as NSURL
            default: return value as AnyObject
            }
        }
    }

    extension URLResourceValues {
        /// Foundation's values for the keys it answers, with the ubiquitous ones (and, for a
        /// `promised` item kept on the server only, the placeholder's).
        static func combining(_ keys: [URLResourceKey], of url: URL, promised: Bool) throws
            -> URLResourceValues
        {
            let ubiquitous = keys.filter(UbiquitousItemValues.keys.contains)
            let wanted = Set(keys)
            guard url.isFileURL, !ubiquitous.isEmpty || promised, let layout = ResourceValuesLayout.checked
            else {
                return try foundationValues(keys, of: url)
            }
            let status = FileStatus(path: url.path, followingLinks: false)
            var values: [URLResourceKey: Any]
            if status != nil {
                let others = keys.filter { !UbiquitousItemValues.keys.contains($0) }
                values = others.isEmpty ? [:] : try (url as NSURL).resourceValues(forKeys: others)
            } else if promised,
                let placeholder = UbiquityPlaceholder(
                    contentsOf: UbiquityPlaceholder.placeholderURL(for: url))
            {
                values = placeholderValues(placeholder, of: url).filter { wanted.contains($0.key) }
            } else {
                throw noSuchItem(url)
            }
            if let item = UbiquitousItemValues(of: url, status: status) {
                for key in ubiquitous { values[key] = item.value(forKey: key) }
            } else if wanted.contains(.isUbiquitousItemKey) {
                // Outside every container, or a container's own folder.
                values[.isUbiquitousItemKey] = NSNumber(value: FileManager.default.isUbiquitousItem(at: url))
            }
            return layout.make(keys: wanted, values: values)
        }

        /// Foundation's answer alone, when there is nothing ubiquitous to add (or, should a
        /// Foundation of another layout ever come, nothing it can be added to).
        private static func foundationValues(_ keys: [URLResourceKey], of url: URL) throws
            -> URLResourceValues
        {
            let foundation: (Set<URLResourceKey>) throws -> URLResourceValues = url.resourceValues(forKeys:)
            return try foundation(Set(keys))
        }

        /// What a placeholder says of the document it stands for, under Apple's keys.
        private static func placeholderValues(_ placeholder: UbiquityPlaceholder, of url: URL)
            -> [URLResourceKey: Any]
        {
            [
                .nameKey: placeholder.name, .localizedNameKey: placeholder.name,
                .pathKey: url.path, .fileSizeKey: NSNumber(value: placeholder.size),
                .totalFileSizeKey: NSNumber(value: placeholder.size),
                .isRegularFileKey: NSNumber(value: true), .isDirectoryKey: NSNumber(value: false),
                .isSymbolicLinkKey: NSNumber(value: false), .isPackageKey: NSNumber(value: false),
                .isHiddenKey: NSNumber(value: placeholder.name.hasPrefix(".")),
                .fileResourceTypeKey: URLFileResourceType.regular,
            ]
        }

        static func noSuchItem(_ url: URL) -> CocoaError {
            CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: url.path, NSURLErrorKey: url])
        }
    }

    /// The stored properties of Foundation's `URLResourceValues` on Linux, whose initializer with
    /// values is private to Foundation: the values, and the keys asked for. Only
    /// ``checked`` makes values with it, after proving on a value Foundation made that the two
    /// agree.
    private struct ResourceValuesLayout {
        var values: [URLResourceKey: Any]
        var keys: Set<URLResourceKey>

        /// Proof that the layout is Foundation's: a value made through Foundation's public
        /// setter reads back through this layout, and one made here reads back through
        /// Foundation's getters. Nil otherwise (then no ubiquitous value is added, and
        /// `DocumentLog` says why once).
        static let checked: ResourceValuesLayout.Type? = {
            guard MemoryLayout<URLResourceValues>.size == MemoryLayout<Self>.size,
                MemoryLayout<URLResourceValues>.alignment == MemoryLayout<Self>.alignment
            else { return refuse() }
            var probe = URLResourceValues()
            probe.name = "probe"
            // The stored properties, in order and by type, as reflection sees them, before any
            // bit is read through this layout: a Foundation that reordered or retyped them is
            // refused here, not misread.
            let stored = Mirror(reflecting: probe).children.map { "\($0.label ?? ""): \(type(of: $0.value))" }
            guard
                stored == [
                    "_values: \(type(of: [URLResourceKey: Any]()))",
                    "_keys: \(type(of: Set<URLResourceKey>()))",
                ]
            else { return refuse() }
            let seen = unsafeBitCast(probe, to: Self.self)
            guard seen.keys == [.nameKey], seen.values.count == 1, seen.values[.nameKey] as? String == "probe"
            else { return refuse() }
            let made = Self.make(
                keys: [.isUbiquitousItemKey], values: [.isUbiquitousItemKey: NSNumber(value: true)])
            guard made.isUbiquitousItem == true, made.allValues.count == 1 else { return refuse() }
            return Self.self
        }()

        static func make(keys: Set<URLResourceKey>, values: [URLResourceKey: Any]) -> URLResourceValues {
            unsafeBitCast(Self(values: values, keys: keys), to: URLResourceValues.self)
        }

        private static func refuse() -> ResourceValuesLayout.Type? {
            DocumentLog.write(
                "URLResourceValues on this Foundation is not laid out as DocumentKit knows it: "
                    + "the ubiquitous resource values are not given")
            return nil
        }
    }
#endif
