import Dispatch
import Foundation
import Synchronization

/// What an S3 store was found to do with the conditions sync depends on, tried on objects of
/// its own in the container's `.documentsync` folder before a remote is first used.
///
/// A store that ignores `If-None-Match: *` or `If-Match` on writes (Garage, MinIO before
/// 2024), or lets two racing create-only writes both succeed, would let one device's edit
/// overwrite another's: it is refused. One that does not list a write at once would make a
/// complete listing miss a file, read as a deletion: refused too. One whose deletes ignore
/// `If-Match` is used with tombstones (``S3Remote/Deletes/tombstones``).
///
/// For example:
///
/// ```swift
/// let probe = try S3Probe.run(on: remote)
/// if let refusal = probe.refusal { print(refusal) }
/// ```
public struct S3Probe: Sendable, Equatable, Codable {
    /// A second `If-None-Match: *` write of an object was refused.
    public var createOnlyHolds: Bool
    /// An `If-Match` write with a tag the object does not have was refused.
    public var replaceIfUnchangedHolds: Bool
    /// Of racing create-only writes of one key, exactly one succeeded, and its bytes are there.
    public var racingWritesHaveOneWinner: Bool
    /// A listing right after a write showed it.
    public var listingShowsWritesAtOnce: Bool
    /// A `DeleteObject` with a tag the object does not have was refused.
    public var conditionalDeletesHold: Bool

    /// How deletes are kept safe on this store.
    public var deletes: S3Remote.Deletes { conditionalDeletesHold ? .conditional : .tombstones }

    /// Why sync refuses the store, naming what failed; nil when it can be used.
    public var refusal: String? {
        var failed: [String] = []
        if !createOnlyHolds {
            failed.append("it ignores If-None-Match: * (a create-only write replaced an object)")
        }
        if !replaceIfUnchangedHolds {
            failed.append("it ignores If-Match (a write over a stale ETag was taken)")
        }
        if !racingWritesHaveOneWinner {
            failed.append("racing create-only writes of one key did not have one winner")
        }
        if !listingShowsWritesAtOnce {
            failed.append(
                "a listing right after a write did not show it (a file missing from a listing reads as deleted)"
            )
        }
        guard !failed.isEmpty else { return nil }
        return "the store cannot be synced with safely: " + failed.joined(separator: "; ")
    }

    /// What was found, in words.
    public var summary: String {
        if let refusal { return "not safe: " + refusal }
        return
            "safe: If-None-Match and If-Match hold, racing create-only writes have one winner, a write is listed at once; "
            + (conditionalDeletesHold
                ? "deletes are conditional (If-Match)"
                : "deletes ignore If-Match, so a delete writes a tombstone")
    }

    /// How many writers race for one key.
    static let racers = 3

    /// Tries the store's conditions on objects under `.documentsync`, and removes them.
    ///
    /// - Throws: ``RemoteError`` when the store cannot be reached or refuses the probe's
    ///   writes (wrong credentials, a missing bucket).
    public static func run(on remote: S3Remote) throws -> S3Probe {
        let folder = RemotePath.metadataFolder
        do { try remote.makeFolder(folder) } catch let error as RemoteError where error.kind == .exists {}
        let id = UUID().uuidString.prefix(8)
        let path = folder.appending("probe-\(id)")
        let raced = folder.appending("probe-race-\(id)")
        var cleanup: [(RemotePath, RemoteTag)] = []
        defer {
            for (path, tag) in cleanup { try? remote.delete(path, condition: .matches(tag)) }
        }
        func refused(_ body: () throws -> Void) throws -> Bool {
            do {
                try body()
                return false
            } catch let error as RemoteError where error.kind == .preconditionFailed {
                return true
            }
        }
        @Sendable func write(_ path: RemotePath, _ text: String, _ condition: WriteCondition) throws
            -> RemoteTag
        {
            guard let tag = try remote.write(path, from: UploadSource(Data(text.utf8)), condition: condition)
            else {
                throw remote.failure(.badAnswer, .write, path, detail: "the store gives no ETag")
            }
            return tag
        }
        var tag = try write(path, "probe 1\n", .absent)
        cleanup = [(path, tag)]
        var probe = S3Probe(
            createOnlyHolds: true, replaceIfUnchangedHolds: true, racingWritesHaveOneWinner: true,
            listingShowsWritesAtOnce: true, conditionalDeletesHold: true)
        probe.listingShowsWritesAtOnce = try remote.list(folder).entries.contains { $0.name == path.name }
        probe.createOnlyHolds = try refused {
            tag = try write(path, "probe 2\n", .absent)
            cleanup = [(path, tag)]
        }
        probe.replaceIfUnchangedHolds = try refused {
            tag = try write(path, "probe 3\n", .matches(RemoteTag("\"00000000000000000000000000000000\"")))
            cleanup = [(path, tag)]
        }

        // Racing create-only writes, each from its own thread.
        let winners = Mutex<[(String, RemoteTag)]>([])
        let failures = Mutex<[any Error]>([])
        let group = DispatchGroup()
        for racer in 0..<racers {
            let text = "racer \(racer)\n"
            DispatchQueue.global().async(group: group) {
                do {
                    let tag = try write(raced, text, .absent)
                    winners.withLock { $0.append((text, tag)) }
                } catch let error as RemoteError where error.kind == .preconditionFailed {
                } catch {
                    failures.withLock { $0.append(error) }
                }
            }
        }
        group.wait()
        if let failure = failures.withLock({ $0.first }) { throw failure }
        let won = winners.withLock { $0 }
        cleanup += won.map { (raced, $0.1) }
        var read = Data()
        if won.count == 1 { _ = try remote.read(raced) { read.append($0) } }
        probe.racingWritesHaveOneWinner = won.count == 1 && read == Data(won[0].0.utf8)

        probe.conditionalDeletesHold = try refused {
            try remote.delete(path, condition: .matches(RemoteTag("\"00000000000000000000000000000000\"")))
        }
        return probe
    }
}
