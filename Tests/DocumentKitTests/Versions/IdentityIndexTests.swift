import Foundation
import Testing

@testable import DocumentKit

/// The version store's table of where each item was last seen, looked up by path and by file.
@Suite struct IdentityIndexTests {
    static func entry(_ path: String, _ inode: UInt64) -> IdentityIndex.Entry {
        IdentityIndex.Entry(path: path, device: 7, inode: inode)
    }

    @Test func lookupsFollowEveryChangeOfTheItems() {
        let first = UUID().uuidString
        let second = UUID().uuidString
        var index = IdentityIndex()
        #expect(index.itemID(path: "/a") == nil)
        index.items[first] = Self.entry("/a", 10)
        #expect(index.itemID(path: "/a") == first)
        #expect(index.itemID(device: 7, inode: 10) == first)
        // A copy made before a change keeps what it knew; the changed one knows the change.
        let before = index
        index.items[first] = Self.entry("/b", 11)
        index.items[second] = Self.entry("/a", 12)
        #expect(before.itemID(path: "/a") == first)
        #expect(index.itemID(path: "/a") == second)
        #expect(index.itemID(path: "/b") == first)
        #expect(index.itemID(device: 7, inode: 10) == nil)
        #expect(index.itemID(device: 7, inode: 12) == second)
        index.items[second] = nil
        #expect(index.itemID(path: "/a") == nil)
    }

    /// Each lookup table is made when first asked for, and again after a change: a store on
    /// a file system with extended attributes looks items up by path only and never makes
    /// the table by file (8 MB at 100,000 items).
    @Test func eachTableIsMadeOnlyWhenAskedFor() {
        var index = IdentityIndex()
        index.items[UUID().uuidString] = Self.entry("/a", 10)
        #expect(index.tablesMade == (false, false))
        _ = index.itemID(path: "/a")
        #expect(index.tablesMade == (true, false))
        _ = index.itemID(device: 7, inode: 10)
        #expect(index.tablesMade == (true, true))
        index.items[UUID().uuidString] = Self.entry("/b", 11)
        #expect(index.tablesMade == (false, false))
    }

    @Test func twoItemsAtOnePathGiveTheSmallerIDWhateverTheOrder() {
        let ids = (0..<20).map { _ in UUID().uuidString }
        var index = IdentityIndex()
        for id in ids.shuffled() { index.items[id] = Self.entry("/same", 5) }
        #expect(index.itemID(path: "/same") == ids.min())
        #expect(index.itemID(device: 7, inode: 5) == ids.min())
    }

    @Test func decodedAndEncodedAsBeforeWithoutItsTables() throws {
        var index = IdentityIndex()
        index.items["7D1C6E62-8C59-4C4F-9E0B-0D3A4F2B9A11"] = Self.entry("/a", 1)
        _ = index.itemID(path: "/a")
        let data = try JSONEncoder().encode(index)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(Set(object?.keys.map { $0 } ?? []) == ["format", "items"])
        let decoded = try JSONDecoder().decode(IdentityIndex.self, from: data)
        #expect(decoded == index)
        #expect(decoded.itemID(path: "/a") == "7D1C6E62-8C59-4C4F-9E0B-0D3A4F2B9A11")
    }

    /// Encoded a slice at a time, the index reads back whole, as `JSONEncoder`'s own encoding of
    /// it does: every slice's items, names that JSON must escape, the empty index.
    @Test(arguments: [0, 1, IdentityIndex.encodingSlice, IdentityIndex.encodingSlice * 2 + 3])
    func encodedASliceAtATimeItReadsBackWhole(_ count: Int) throws {
        var index = IdentityIndex()
        for number in 0..<count {
            let path = number % 3 == 0 ? "/d/\"quoted\" \\ back/\u{1}ctl/é \(number)" : "/d/f\(number).txt"
            index.items[UUID().uuidString] = IdentityIndex.Entry(
                path: path, device: UInt64(number), inode: UInt64.max - UInt64(number))
        }
        var data = Data()
        try index.encode { data.append($0) }
        #expect(try JSONDecoder().decode(IdentityIndex.self, from: data) == index)
        let whole = try JSONEncoder().encode(index)
        #expect(try JSONDecoder().decode(IdentityIndex.self, from: whole) == index)
        // The same members, an item each, in the same spelling.
        let members = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect((members["items"] as? [String: Any])?.count == count)
        #expect(members["format"] as? Int == index.format)
    }
}
