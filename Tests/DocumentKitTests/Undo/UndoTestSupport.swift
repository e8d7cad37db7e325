import DocumentKit
import Foundation
import Synchronization

/// A model edited the way apps do it: every change of `text` registers its own undo.
@MainActor
final class UndoNote {
    let undoManager: UndoManager
    var text = "" {
        didSet {
            let old = oldValue
            undoManager.registerUndo(withTarget: self) { $0.text = old }
        }
    }

    init(_ undoManager: UndoManager) {
        self.undoManager = undoManager
    }
}

/// An undo manager that groups only explicitly, so tests do not depend on the event loop.
@MainActor
func explicitUndoManager() -> UndoManager {
    let manager = UndoManager()
    manager.groupsByEvent = false
    return manager
}

extension UndoManager {
    /// Runs `body` in one explicit undo group.
    func grouped(_ body: () -> Void) {
        beginUndoGrouping()
        body()
        endUndoGrouping()
    }
}

/// Records, in order, the undo notifications one undo manager posts.
@MainActor
final class UndoNotificationLog {
    static let names: [Notification.Name] = [
        .NSUndoManagerCheckpoint, .NSUndoManagerDidOpenUndoGroup, .NSUndoManagerWillCloseUndoGroup,
        .NSUndoManagerDidCloseUndoGroup, .NSUndoManagerWillUndoChange, .NSUndoManagerDidUndoChange,
        .NSUndoManagerWillRedoChange, .NSUndoManagerDidRedoChange,
    ]

    struct Entry: Sendable {
        var name: String
        var groupIsDiscardable: Bool?
    }

    private final class Storage: Sendable {
        let entries = Mutex<[Entry]>([])
    }

    // Observers run synchronously on the posting thread, but their closures must be Sendable.
    private let storage = Storage()
    private var tokens: [any NSObjectProtocol] = []

    init(_ manager: UndoManager) {
        let identity = ObjectIdentifier(manager)
        for name in Self.names {
            let token = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) {
                [storage] notification in
                // Tests run in parallel, each with its own manager: keep only this one's.
                guard let object = notification.object as AnyObject?, ObjectIdentifier(object) == identity
                else { return }
                let short = notification.name.rawValue
                    .replacingOccurrences(of: "NSUndoManager", with: "")
                    .replacingOccurrences(of: "Notification", with: "")
                let discardable = notification.userInfo?[NSUndoManagerGroupIsDiscardableKey] as? Bool
                storage.entries.withLock { $0.append(Entry(name: short, groupIsDiscardable: discardable)) }
            }
            tokens.append(token)
        }
    }

    isolated deinit {
        for token in tokens { NotificationCenter.default.removeObserver(token) }
    }

    /// The short names ("Checkpoint", "DidOpenUndoGroup", ...) posted so far, in order.
    var recorded: [String] { storage.entries.withLock { $0.map(\.name) } }

    var entries: [Entry] { storage.entries.withLock { $0 } }

    func clear() { storage.entries.withLock { $0.removeAll() } }
}

/// Parses the `key=value` lines a child command prints.
func keyValues(_ output: String) -> [String: String] {
    var result: [String: String] = [:]
    for line in output.split(separator: "\n") {
        guard let equals = line.firstIndex(of: "=") else { continue }
        result[String(line[..<equals])] = String(line[line.index(after: equals)...])
    }
    return result
}

/// A value that observer closures set on the main actor and the test reads afterwards.
@MainActor
final class UndoTestBox<Value> {
    var value: Value

    init(_ value: Value) {
        self.value = value
    }
}
