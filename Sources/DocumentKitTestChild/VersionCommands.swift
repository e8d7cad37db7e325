import DocumentKit
import Foundation

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
    default:
        return false
    }
    return true
}
