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

/// Where `docs watch` learns of changes, in one place so that `DocumentQuery` can replace
/// the stopgap.
///
/// `DocumentQuery` has not landed in this branch yet, so this rescans the folder every
/// 200 ms and compares each document's inode, size and modification time: the same
/// added/changed/removed lines, at most 200 ms late. Once the query lands, ``watch(_:until:report:)``
/// becomes a `DocumentQuery` with `searchScopes = [container.url]`, `fileNamePattern = "*.txt"`,
/// iterating `snapshots()` (or its did-update notifications) and mapping its added, changed
/// and removed items to ``ContainerChange``s.
enum QueryAdapter {
    /// How `docs --version` describes the source of `watch`.
    static let sourceDescription = "polling every 200 ms (DocumentQuery not yet wired)"

    static let interval: Duration = .milliseconds(200)

    /// Reports each batch of changes in the container until `shouldStop` returns true.
    ///
    /// `ready` runs once, after the first scan: a change made after it is reported.
    ///
    /// - Throws: ``DocumentKitError`` when the container cannot be listed, or what `report` throws.
    @MainActor
    static func watch(
        _ container: TextContainer, until shouldStop: () -> Bool, ready: () -> Void,
        report: ([ContainerChange]) throws -> Void
    ) async throws {
        var known = try snapshot(container)
        ready()
        while !shouldStop() {
            try? await Task.sleep(for: interval)
            if shouldStop() { break }
            let current = try snapshot(container)
            let changes = differences(from: known, to: current)
            known = current
            if !changes.isEmpty { try report(changes) }
        }
    }

    static func snapshot(_ container: TextContainer) throws -> [String: TextContainer.Entry] {
        var byName: [String: TextContainer.Entry] = [:]
        for entry in try container.documents() { byName[entry.fileName] = entry }
        return byName
    }

    /// Added, then changed, then removed documents, each sorted by name.
    static func differences(
        from old: [String: TextContainer.Entry], to new: [String: TextContainer.Entry]
    ) -> [ContainerChange] {
        var added: [ContainerChange] = []
        var changed: [ContainerChange] = []
        var removed: [ContainerChange] = []
        for (name, entry) in new {
            if let previous = old[name] {
                if previous != entry {
                    changed.append(ContainerChange(kind: .changed, fileName: name, entry: entry))
                }
            } else {
                added.append(ContainerChange(kind: .added, fileName: name, entry: entry))
            }
        }
        for name in old.keys where new[name] == nil {
            removed.append(ContainerChange(kind: .removed, fileName: name, entry: nil))
        }
        let byName: (ContainerChange, ContainerChange) -> Bool = { $0.fileName < $1.fileName }
        return added.sorted(by: byName) + changed.sorted(by: byName) + removed.sorted(by: byName)
    }
}
