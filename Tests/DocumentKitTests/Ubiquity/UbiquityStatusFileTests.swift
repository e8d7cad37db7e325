import Foundation
import Testing

@testable import DocumentKit

/// The status file an agent publishes, and the list of synced files beside it: written only
/// when it changed, read with the status, and read from an older agent's single file too.
@Suite struct UbiquityStatusFileTests {
    private func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "status-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func theSyncedFilesRoundTripWhateverTheirNames() throws {
        let url = try folder().appendingPathComponent("C.status.json")
        // Whole seconds: JSON keeps a date as a decimal number of seconds.
        var status = UbiquityStatus(
            state: .upToDate, updated: Date(timeIntervalSince1970: 1_700_000_000), remote: "r")
        status.synced = [
            "notes.txt": [12, 5, 1_700_000_000_123_456_789], "a b/ü 1 2 3.txt": [-3, 0, 7],
            "line\nbreak.txt": [4, 4, 4], "Deep/plan.txt": [Int64.max, 1 << 40, -1],
        ]
        status.uploadErrors = ["x.txt": "refused"]
        try status.write(to: url)
        #expect(UbiquityStatus.read(url) == status)
        // The status file itself no longer lists them.
        let json = try String(contentsOf: url, encoding: .utf8)
        #expect(!json.contains("notes.txt"))
        let list = try #require(FileManager.default.contents(atPath: UbiquityStatus.syncedURL(of: url).path))
        #expect(list.count > 0)
        #expect(
            (try? FileManager.default.attributesOfItem(atPath: UbiquityStatus.syncedURL(of: url).path))?[
                .posixPermissions] as? Int == 0o600)
    }

    @Test func theListIsRewrittenOnlyWhenItChanged() throws {
        let url = try folder().appendingPathComponent("C.status.json")
        var status = UbiquityStatus(state: .upToDate, remote: "r")
        status.synced = Dictionary(
            uniqueKeysWithValues: (0..<1000).map { ("doc\($0).txt", [Int64($0), 10, 20]) })
        try status.write(to: url)
        let listURL = UbiquityStatus.syncedURL(of: url)
        let first = try #require(FileStatus(path: listURL.path))
        status.state = .syncing
        try status.write(to: url)
        #expect(FileStatus(path: listURL.path)?.inode == first.inode, "rewritten with the same list")
        status.synced["doc1.txt"] = [1, 11, 21]
        try status.write(to: url)
        #expect(FileStatus(path: listURL.path)?.inode != first.inode)
        #expect(UbiquityStatus.read(url)?.synced["doc1.txt"] == [1, 11, 21])
    }

    @Test func anOlderAgentsStatusWithItsListInsideIsRead() throws {
        let url = try folder().appendingPathComponent("C.status.json")
        let old =
            #"{"state":"up to date","updated":1700000000,"remote":"r","synced":{"a.txt":[1,2,3]},"uploading":[],"downloading":[],"percent":{},"uploadErrors":{},"downloadErrors":{}}"#
        try Data(old.utf8).write(to: url)
        #expect(UbiquityStatus.read(url)?.synced == ["a.txt": [1, 2, 3]])
    }

    @Test func aDamagedListLosesOnlyItsDamagedRecords() {
        var data = UbiquityStatus.encodeSynced(["a.txt": [1, 2, 3], "b.txt": [4, 5, 6]])
        for damaged in ["7 x 9 c.txt", "1 2 d.txt", "1 2 3 "] {
            data.append(contentsOf: Array(damaged.utf8))
            data.append(0)
        }
        #expect(UbiquityStatus.parseSynced(data) == ["a.txt": [1, 2, 3], "b.txt": [4, 5, 6]])
    }
}
