import DocumentKit
import Foundation

@testable import DocumentSync

extension SyncDevice {
    /// Two devices on one remote that both changed `path` from `base`: `b`'s change goes up
    /// first, `a` makes the conflict (`b`'s text at the path, its own a conflict version) and
    /// `b` takes it. Returns the number of conflicts `a`'s pass made.
    static func conflict(
        _ a: SyncDevice, _ b: SyncDevice, at path: String, base: String, a aText: String, b bText: String
    ) throws -> Int {
        try a.write(path, base)
        _ = try a.sync()
        _ = try b.sync()
        try a.write(path, aText)
        try b.write(path, bText)
        _ = try b.sync()
        let conflicts = try a.sync().conflicts
        _ = try b.sync()
        return conflicts
    }

    /// Puts a conflict on `remote` as another device shares one (its bytes, then its
    /// description), under the identifier `id`.
    static func share(
        _ text: String, as description: SharedConflictDescription, id: String = "x1", on remote: any Remote
    ) throws {
        let conflicts = RemotePath(".documentsync/conflicts")
        try? remote.makeFolder(RemotePath(".documentsync"))
        try? remote.makeFolder(conflicts)
        try remote.write(
            conflicts.appending(id + ".data"), from: UploadSource(Data(text.utf8)), condition: .absent)
        try remote.write(
            conflicts.appending(id + ".json"), from: UploadSource(try JSONEncoder().encode(description)),
            condition: .absent)
    }
}
