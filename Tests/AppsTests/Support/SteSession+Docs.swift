import DocumentKit
import Foundation

extension SteSession {
    /// Runs the real `docs` on this session's container and data folders, as the user would
    /// in another terminal while `ste` runs, and waits for it.
    func docs(_ arguments: [String], environment extra: [String: String] = [:]) throws -> DocsResult {
        var environment = ProcessInfo.processInfo.environment
        environment["STE_CONTAINER"] = container.path
        environment["XDG_DATA_HOME"] = dataHome.path
        environment["HOME"] = root.path
        environment["XDG_CONFIG_HOME"] = configHome.path
        environment["XDG_STATE_HOME"] = stateHome.path
        environment["EDITOR"] = "false"
        return try runDocs(
            DocsBinary.url, arguments, environment: environment.merging(extra) { $1 }, input: nil,
            scratch: root)
    }

    /// The version store `ste` and `docs` use here: the shared store under this session's
    /// XDG_DATA_HOME, never the user's. A new instance each time, so nothing is cached.
    var store: VersionStore {
        VersionStore(root: dataHome.appendingPathComponent("DocumentKit/Versions", isDirectory: true))
    }

    /// The texts of the stored versions of the document in `fileName`: history, conflict
    /// versions resolved or not.
    func storedTexts(of fileName: String) -> [String] {
        store.otherVersionsOfItem(at: file(fileName)).compactMap {
            try? String(contentsOf: $0.url, encoding: .utf8)
        }
    }

    /// The texts of the unresolved conflict versions of the document in `fileName`.
    func conflictTexts(of fileName: String) -> [String] {
        store.unresolvedConflictVersionsOfItem(at: file(fileName)).compactMap {
            try? String(contentsOf: $0.url, encoding: .utf8)
        }
    }

    /// The inode of the file `name` in the container: a safe save makes a new one.
    func inode(of name: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: file(name).path))?[.systemFileNumber] as? Int
    }

    /// Waits until the editor pane's first row shows `line`: the document has loaded and
    /// takes typing. (While it loads, the status line already names it, but keys are refused.)
    func waitForEditor(showing line: String) async -> Bool {
        await wait { screen.contains("│ \(line)") }
    }
}
