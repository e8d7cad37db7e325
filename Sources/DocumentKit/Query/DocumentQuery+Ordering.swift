import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension DocumentQuery.Model {
    // MARK: Filtering

    /// Whether the name at the end of `path` matches ``DocumentQuery/fileNamePattern``.
    func matchesPattern(_ path: [UInt8]) -> Bool {
        guard let patternBytes else { return true }
        let nameStart = (path.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1
        return Syscall.withCString(patternBytes) { pattern in
            Syscall.withCString(Array(path[nameStart...])) { fnmatch(pattern, $0, 0) == 0 }
        }
    }

    /// The item for `found`, whose name matches the pattern, if the predicate takes it.
    func makeItem(_ found: Found, id: UInt64) -> DocumentQuery.Item? {
        let item = DocumentQuery.Item(
            id: id, fileSystemPath: found.path, status: found.status, isPackage: found.isPackage,
            hasUnresolvedConflicts: conflicts?.contains(path: found.path, inode: found.status.inode)
                ?? false,
            ubiquity: ubiquity.attributes(of: found.path, status: found.isPlaceholder ? nil : found.status))
        if let predicate = configuration.predicate, !predicate.value.evaluate(with: item) { return nil }
        return item
    }

    // MARK: Order

    func precedes(_ a: DocumentQuery.Item, _ b: DocumentQuery.Item) -> Bool {
        for ordering in configuration.orderings {
            switch ordering {
            case .attribute(let key, let ascending):
                let order = Self.compare(a, b, by: key)
                if order != 0 { return ascending ? order < 0 : order > 0 }
            case .descriptor(let descriptor):
                switch descriptor.value.compare(a, to: b) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
        }
        let order = Self.comparePaths(a.fileSystemPath, b.fileSystemPath)
        return order != 0 ? order < 0 : a.id < b.id
    }

    /// Byte order of two paths: negative, zero or positive.
    static func comparePaths(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let order = a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y -> CInt in
                guard let x = x.baseAddress, let y = y.baseAddress else { return 0 }
                return memcmp(x, y, min(a.count, b.count))
            }
        }
        return order != 0 ? Int(order) : a.count - b.count
    }

    static func compare(
        _ a: DocumentQuery.Item, _ b: DocumentQuery.Item, by key: DocumentQuery.SortDescriptor.Key
    ) -> Int {
        switch key {
        case .fileName:
            let folded = compareBytes(a.nameBytes, b.nameBytes, foldingCase: true)
            return folded != 0 ? folded : compareBytes(a.nameBytes, b.nameBytes)
        case .modificationDate: return compareValues(a.status.modification, b.status.modification)
        case .creationDate:
            switch (a.status.birth, b.status.birth) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): return compareValues(x, y)
            }
        case .fileSize: return compareValues(a.status.size, b.status.size)
        case .path: return compareBytes(a.fileSystemPath[...], b.fileSystemPath[...])
        }
    }

    static func compareValues<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

    static func compareBytes(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>, foldingCase: Bool = false)
        -> Int
    {
        if !foldingCase {
            let order = a.withUnsafeBufferPointer { x in
                b.withUnsafeBufferPointer { y in
                    memcmp(x.baseAddress!, y.baseAddress!, min(x.count, y.count))
                }
            }
            return order != 0 ? (order < 0 ? -1 : 1) : compareValues(a.count, b.count)
        }
        var i = a.startIndex
        var j = b.startIndex
        while i < a.endIndex && j < b.endIndex {
            var x = a[i]
            var y = b[j]
            if foldingCase {
                if x >= 65 && x <= 90 { x += 32 }
                if y >= 65 && y <= 90 { y += 32 }
            }
            if x != y { return x < y ? -1 : 1 }
            i += 1
            j += 1
        }
        return compareValues(a.count, b.count)
    }
}
