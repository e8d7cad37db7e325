import Dispatch
import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a version-store child command; returns false if `name` is not one.
func runVersionCommand(_ name: String, _ arguments: [String]) -> Bool {
    switch name {
    case "add-conflict":
        // add-conflict STORE ITEM CONTENTS: adds a conflict version of ITEM, from another process.
        reportingErrors {
            let store = VersionStore(root: URL(fileURLWithPath: arguments[0]))
            _ = try store.addConflictOfItem(
                at: URL(fileURLWithPath: arguments[1]), withContentsOf: URL(fileURLWithPath: arguments[2]),
                savingComputer: "child", modificationDate: Date(), options: [])
        }
    case "resolve-conflicts":
        // resolve-conflicts STORE ITEM: marks every conflict version of ITEM resolved.
        reportingErrors {
            let store = VersionStore(root: URL(fileURLWithPath: arguments[0]))
            for version in store.unresolvedConflictVersionsOfItem(at: URL(fileURLWithPath: arguments[1])) {
                version.isResolved = true
            }
        }
    case "remove-versions":
        // remove-versions STORE ITEM: removes every stored version of ITEM, conflicts included.
        reportingErrors {
            try VersionStore(root: URL(fileURLWithPath: arguments[0])).removeOtherVersionsOfItem(
                at: URL(fileURLWithPath: arguments[1]))
        }
    case "query-conflicts":
        // query-conflicts STORE FOLDER: runs a DocumentQuery over FOLDER whose conflict flags
        // come from the store at STORE; prints "conflicts NAME..." (the items whose
        // NSMetadataUbiquitousItemHasUnresolvedConflictsKey is true, sorted) once gathered
        // and again whenever that changes. Runs until killed, or a minute.
        guard arguments.count == 2 else { fail("usage: query-conflicts STORE FOLDER") }
        let query = DocumentQuery(searchScopes: [URL(fileURLWithPath: arguments[1], isDirectory: true)])
        query.versionStore = VersionStore(root: URL(fileURLWithPath: arguments[0]))
        let snapshots = query.snapshots()
        guard query.start() else { fail("cannot start the query: \(query.lastError.map { "\($0)" } ?? "?")") }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { _exit(3) }
        Task {
            var last: [String]?
            for await snapshot in snapshots {
                let conflicted = snapshot.results.filter {
                    ($0.value(forAttribute: NSMetadataUbiquitousItemHasUnresolvedConflictsKey) as? NSNumber)?
                        .boolValue == true
                }.map(\.fileName).sorted()
                guard conflicted != last else { continue }
                last = conflicted
                printUnbuffered((["conflicts"] + conflicted).joined(separator: " "))
            }
            withExtendedLifetime(query) {}
        }
        dispatchMain()
    case "versioned-save-loop":
        // versioned-save-loop PATH STORE SIZE: saves a document of SIZE bytes at PATH again and
        // again, each save keeping the previous contents as a version in the store at STORE;
        // prints "saving" before the first save. Runs until killed.
        guard arguments.count == 3, let size = Int(arguments[2]) else {
            fail("usage: versioned-save-loop PATH STORE SIZE")
        }
        let url = URL(fileURLWithPath: arguments[0])
        let store = VersionStore(root: URL(fileURLWithPath: arguments[1]))
        Task { @MainActor in
            await saveForever(url, store: store, size: size)
        }
        dispatchMain()
    default:
        return false
    }
    return true
}

@MainActor
private func saveForever(_ url: URL, store: VersionStore, size: Int) async -> Never {
    let document = LoopDocument(fileURL: url)
    document.versionStore = store
    document.autosaveConfiguration.isEnabled = false
    guard await document.open() else { fail("cannot open \(url.path)") }
    _ = "saving\n".withCString { write(1, $0, strlen($0)) }
    var generation: UInt8 = 0
    while true {
        generation &+= 1
        document.bytes = Data(repeating: generation, count: size)
        document.updateChangeCount(.done)
        _ = await document.save(to: url, for: .forOverwriting)
    }
}

/// The document `versioned-save-loop` saves: its bytes as they are.
private final class LoopDocument: Document {
    var bytes = Data()
    override func contents(forType typeName: String) throws -> Any { bytes }
    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        bytes = contents as? Data ?? Data()
    }
}
