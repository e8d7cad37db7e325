import DocumentKit
import Foundation

@testable import DocumentSync

/// A remote that hands every call to `base`: a test's remote that changes one call (a
/// listing, a write) subclasses it and overrides that one.
class ForwardingRemote: Remote, @unchecked Sendable {
    let base: any Remote

    init(_ base: any Remote) { self.base = base }

    var displayName: String { base.displayName }
    var address: RemoteAddress? { base.address }
    var hasFileIDs: Bool { base.hasFileIDs }
    var mostRequestsAtOnce: Int { base.mostRequestsAtOnce }
    var movesAreAtomic: Bool { base.movesAreAtomic }

    func list(_ folder: RemotePath) throws -> RemoteListing { try base.list(folder) }
    func listTree(keeping: @escaping @Sendable (RemotePath, RemoteEntry) -> Bool) throws
        -> [RemotePath: RemoteEntry]?
    {
        try base.listTree(keeping: keeping)
    }
    func entry(at path: RemotePath) throws -> RemoteEntry? { try base.entry(at: path) }
    func read(_ path: RemotePath, into sink: (Data) throws -> Void) throws -> RemoteTag {
        try base.read(path, into: sink)
    }
    func read(_ path: RemotePath, expectedSize: Int64?, into sink: (Data) throws -> Void) throws -> RemoteTag
    {
        try base.read(path, expectedSize: expectedSize, into: sink)
    }
    func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition) throws -> RemoteTag?
    {
        try base.write(path, from: source, condition: condition)
    }
    func write(_ path: RemotePath, from source: UploadSource, condition: WriteCondition, placeListed: Bool)
        throws -> RemoteTag?
    {
        try base.write(path, from: source, condition: condition, placeListed: placeListed)
    }
    func delete(_ path: RemotePath, condition: WriteCondition) throws {
        try base.delete(path, condition: condition)
    }
    func move(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws
        -> RemoteTag?
    {
        try base.move(source, to: destination, condition: condition)
    }
    func finishMove(_ source: RemotePath, to destination: RemotePath, condition: WriteCondition?) throws {
        try base.finishMove(source, to: destination, condition: condition)
    }
    func makeFolder(_ path: RemotePath) throws { try base.makeFolder(path) }
    func wantsHashBeforeUpload(ofSize size: Int64) -> Bool { base.wantsHashBeforeUpload(ofSize: size) }
    func deferDurability() -> Bool { base.deferDurability() }
    func makeWritesDurable() throws { try base.makeWritesDurable() }
    func changeMarker() throws -> RemoteTag? { try base.changeMarker() }
    func watchChanges(_ changed: @escaping @Sendable () -> Void) throws -> RemoteWatch? {
        try base.watchChanges(changed)
    }
}
