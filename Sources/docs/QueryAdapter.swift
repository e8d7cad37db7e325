import DocumentKit
import Foundation
import TextContainer

/// One change `docs watch` reports.
struct ContainerChange: Equatable, Sendable {
    enum Kind: String, Sendable {
        case added, changed, removed
    }

    var kind: Kind
    var fileName: String
    /// The document as it is now; nil when it was removed.
    var entry: TextContainer.Entry?
}

/// Where `docs watch` learns of changes: a live ``DocumentQuery`` over the container, its
/// added, changed and removed items turned into ``ContainerChange``s. A rename, which the
/// query reports as one changed item with a new URL, is printed as the old name removed and
/// the new one added.
enum QueryAdapter {
    /// How `docs --version` describes the source of `watch`.
    static let sourceDescription = "DocumentQuery over inotify"

    /// Reports each batch of changes in the container until `shouldStop` returns true.
    ///
    /// `ready` runs once, after the first gathering: a change made after it is reported.
    ///
    /// - Throws: ``DocumentKitError`` when the container cannot be watched, or what `report` throws.
    @MainActor
    static func watch(
        _ container: TextContainer, until shouldStop: @escaping @Sendable () -> Bool, ready: () -> Void,
        report: ([ContainerChange]) throws -> Void
    ) async throws {
        // The same documents as `docs list` and ste's list: `.txt` files directly in the container.
        let query = container.documentQuery()
        let snapshots = query.snapshots()
        guard query.start() else {
            throw query.lastError
                ?? DocumentKitError(.ioFailure, operation: "watch the container", url: container.url)
        }
        defer { query.stop() }
        // Signals only set a flag; a small watchdog turns it into the end of the stream.
        let watchdog = Task.detached {
            while !shouldStop() { try? await Task.sleep(for: .milliseconds(100)) }
            query.stop()
        }
        defer { watchdog.cancel() }
        var names: [AnyHashable: String] = [:]
        var first = true
        for await snapshot in snapshots {
            if first {
                for item in snapshot.results { names[item.id] = item.fileName }
                first = false
                ready()
                continue
            }
            var added: [ContainerChange] = []
            var changed: [ContainerChange] = []
            var removed: [ContainerChange] = []
            for item in snapshot.added {
                names[item.id] = item.fileName
                added.append(ContainerChange(kind: .added, fileName: item.fileName, entry: entry(item)))
            }
            for item in snapshot.changed {
                if let old = names[item.id], old != item.fileName {
                    removed.append(ContainerChange(kind: .removed, fileName: old, entry: nil))
                    added.append(ContainerChange(kind: .added, fileName: item.fileName, entry: entry(item)))
                } else {
                    changed.append(
                        ContainerChange(kind: .changed, fileName: item.fileName, entry: entry(item)))
                }
                names[item.id] = item.fileName
            }
            for item in snapshot.removed {
                names[item.id] = nil
                removed.append(ContainerChange(kind: .removed, fileName: item.fileName, entry: nil))
            }
            let byName: (ContainerChange, ContainerChange) -> Bool = { $0.fileName < $1.fileName }
            let changes = added.sorted(by: byName) + changed.sorted(by: byName) + removed.sorted(by: byName)
            if !changes.isEmpty { try report(changes) }
            if shouldStop() { break }
        }
    }

    private static func entry(_ item: DocumentQuery.Item) -> TextContainer.Entry {
        let modified: Double = item.modificationDate.timeIntervalSince1970
        let seconds = modified.rounded(.down)
        return TextContainer.Entry(
            fileName: item.fileName, size: Int64(item.fileSize), modificationSeconds: Int64(seconds),
            modificationNanoseconds: Int64((modified - seconds) * 1e9), inode: 0)
    }
}
