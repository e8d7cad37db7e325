import Foundation

/// The differences between two texts' lines, as hunks: runs of the old text's lines that the
/// new text replaced with some of its own.
///
/// Myers' O(ND) greedy algorithm finds the fewest lines removed and inserted, after the lines
/// the two texts start and end with in common are set aside. It is bounded: past
/// ``mostEdits`` changed lines it stops, and the lines found once in each text (in the same
/// order, as patience diff takes them) split the texts into pieces that are diffed on their
/// own; a piece that still has too many changes is one hunk. So two unrelated texts of 100,000
/// lines cost a few passes over them, not 10¹⁰ steps, and a diff is minimal whenever fewer than
/// ``mostEdits`` lines changed.
///
/// For example:
///
/// ```swift
/// LineDiff.hunks(from: ["a", "b", "c"], to: ["a", "B", "c", "d"])
/// // [Hunk(old: 1..<2, new: 1..<2), Hunk(old: 3..<3, new: 3..<4)]
/// ```
package enum LineDiff {
    /// A run of old lines (`old`, by index) that the new text replaced with its lines `new`.
    ///
    /// An insertion replaces an empty run (before the old line `old.lowerBound`); a deletion
    /// puts in no lines (`new` is empty).
    package struct Hunk: Equatable, Sendable {
        package var old: Range<Int>
        package var new: Range<Int>

        package init(old: Range<Int>, new: Range<Int>) {
            self.old = old
            self.new = new
        }
    }

    /// The most lines removed plus inserted that the O(ND) search looks for in one piece. Its
    /// memory grows with the square of this (about 8 MB at 1,000), its time with this times
    /// the piece's lines.
    package static let mostEdits = 1000

    /// The hunks that turn the text lines `old` into `new`, in order; two hunks never touch
    /// (between any two, at least one line is kept). Lines are equal when their UTF-8 bytes
    /// are, as the merge compares them ("é" in NFC and in NFD differ).
    ///
    /// The search compares lines where it stands: lines are hashed only past the bound, for
    /// the anchors.
    package static func hunks(from old: [String], to new: [String]) -> [Hunk] {
        hunks(
            old.count, new.count, mostEdits: mostEdits,
            equal: { sameBytes(old[$0], new[$1]) },
            anchors: {
                Piece.anchors(of: $0, old: { UTF8Line(text: old[$0]) }, new: { UTF8Line(text: new[$0]) })
            })
    }

    /// ``hunks(from:to:)`` of line numbers (equal lines, equal numbers), with the bound given.
    package static func hunks(from old: [Int], to new: [Int], mostEdits: Int) -> [Hunk] {
        hunks(
            old.count, new.count, mostEdits: mostEdits, equal: { old[$0] == new[$1] },
            anchors: { Piece.anchors(of: $0, old: { old[$0] }, new: { new[$0] }) })
    }

    /// Whether two strings hold the same UTF-8 bytes: equal small strings share their bits,
    /// and other lines differ in length or are compared byte by byte.
    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
    }

    /// A line as a dictionary key by its UTF-8 bytes, hashed in one call.
    private struct UTF8Line: Hashable {
        let text: String

        static func == (lhs: Self, rhs: Self) -> Bool { sameBytes(lhs.text, rhs.text) }

        func hash(into hasher: inout Hasher) {
            var text = self.text
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// The diff of `oldCount` lines against `newCount`, told whether old line `i` equals new
    /// line `j` by `equal`, and, past the bound, a piece's anchors by `anchors`.
    private static func hunks(
        _ oldCount: Int, _ newCount: Int, mostEdits: Int, equal: (Int, Int) -> Bool,
        anchors: (Piece) -> [(old: Int, new: Int)]
    ) -> [Hunk] {
        var kept = KeptLines(old: oldCount, new: newCount)
        // The lines both start and end with are kept without a search.
        var start = 0
        while start < oldCount, start < newCount, equal(start, start) {
            kept.keep(start, start)
            start += 1
        }
        var oldEnd = oldCount
        var newEnd = newCount
        while oldEnd > start, newEnd > start, equal(oldEnd - 1, newEnd - 1) {
            oldEnd -= 1
            newEnd -= 1
            kept.keep(oldEnd, newEnd)
        }
        let piece = Piece(old: start..<oldEnd, new: start..<newEnd)
        if !search(piece, equal, mostEdits: mostEdits, into: &kept) {
            let anchors = anchors(piece)
            for anchor in anchors { kept.keep(anchor.old, anchor.new) }
            // Without anchors the one gap is the piece just searched: it is one hunk.
            for gap in anchors.isEmpty ? [] : piece.gaps(between: anchors) {
                _ = search(gap, equal, mostEdits: mostEdits, into: &kept)
            }
        }
        return kept.hunks()
    }

    /// A part of each text: old lines and new lines.
    struct Piece {
        var old: Range<Int>
        var new: Range<Int>

        /// The lines found once in this piece of each text, paired, the longest run of them in
        /// the same order in both (patience diff's anchors).
        static func anchors<Key: Hashable>(of piece: Piece, old: (Int) -> Key, new: (Int) -> Key)
            -> [(old: Int, new: Int)]
        {
            // Old lines by key: how often each is in the piece and where; new lines only look.
            var counts: [Key: (old: Int, new: Int, at: Int)] = [:]
            counts.reserveCapacity(piece.old.count)
            for index in piece.old { counts[old(index), default: (0, 0, index)].old += 1 }
            var keys: [Key?] = []
            keys.reserveCapacity(piece.new.count)
            for index in piece.new {
                let key = new(index)
                guard var count = counts[key] else {
                    keys.append(nil)
                    continue
                }
                count.new += 1
                counts[key] = count
                keys.append(key)
            }
            var pairs: [(old: Int, new: Int)] = []
            for (offset, key) in keys.enumerated() {
                if let key, let count = counts[key], count.old == 1, count.new == 1 {
                    pairs.append((count.at, piece.new.lowerBound + offset))
                }
            }
            // The longest run increasing in old positions too, by patience sorting.
            var pileTops: [Int] = []  // index in `pairs` of each pile's top
            var previous = [Int](repeating: -1, count: pairs.count)
            for (index, pair) in pairs.enumerated() {
                var low = 0
                var high = pileTops.count
                while low < high {
                    let middle = (low + high) / 2
                    if pairs[pileTops[middle]].old < pair.old { low = middle + 1 } else { high = middle }
                }
                if low > 0 { previous[index] = pileTops[low - 1] }
                if low == pileTops.count { pileTops.append(index) } else { pileTops[low] = index }
            }
            var chain: [(old: Int, new: Int)] = []
            var index = pileTops.last ?? -1
            while index >= 0 {
                chain.append(pairs[index])
                index = previous[index]
            }
            return chain.reversed()
        }

        /// The pieces between consecutive anchors (and before the first, after the last).
        func gaps(between anchors: [(old: Int, new: Int)]) -> [Piece] {
            var gaps: [Piece] = []
            var oldStart = old.lowerBound
            var newStart = new.lowerBound
            for anchor in anchors {
                gaps.append(Piece(old: oldStart..<anchor.old, new: newStart..<anchor.new))
                oldStart = anchor.old + 1
                newStart = anchor.new + 1
            }
            gaps.append(Piece(old: oldStart..<old.upperBound, new: newStart..<new.upperBound))
            return gaps.filter { !$0.old.isEmpty && !$0.new.isEmpty }
        }
    }

    /// Which lines of each text are kept, paired in order.
    struct KeptLines {
        var old: [Bool]
        var new: [Bool]

        init(old: Int, new: Int) {
            self.old = [Bool](repeating: false, count: old)
            self.new = [Bool](repeating: false, count: new)
        }

        mutating func keep(_ oldIndex: Int, _ newIndex: Int) {
            old[oldIndex] = true
            new[newIndex] = true
        }

        /// What lies between one kept pair and the next.
        func hunks() -> [Hunk] {
            var hunks: [Hunk] = []
            var o = 0
            var n = 0
            while o < old.count || n < new.count {
                if o < old.count, n < new.count, old[o], new[n] {
                    o += 1
                    n += 1
                    continue
                }
                let start = (old: o, new: n)
                while o < old.count, !old[o] { o += 1 }
                while n < new.count, !new[n] { n += 1 }
                hunks.append(Hunk(old: start.old..<o, new: start.new..<n))
            }
            return hunks
        }
    }

    /// Myers' greedy search for the fewest edits in `piece`; marks the lines it keeps and
    /// returns true, or returns false (marking nothing) when more than `mostEdits` are needed.
    private static func search(
        _ piece: Piece, _ equal: (Int, Int) -> Bool, mostEdits: Int, into kept: inout KeptLines
    ) -> Bool {
        let n = piece.old.count
        let m = piece.new.count
        let (oldBase, newBase) = (piece.old.lowerBound, piece.new.lowerBound)
        if n == 0 || m == 0 { return true }
        let limit = min(n + m, mostEdits)
        let offset = limit + 1
        var furthest = [Int](repeating: 0, count: 2 * limit + 3)
        // furthest[offset + k] after each round d, for k in -d...d: the trail back.
        var trail: [[Int]] = []
        for d in 0...limit {
            for k in stride(from: -d, through: d, by: 2) {
                var x: Int
                if k == -d || (k != d && furthest[offset + k - 1] < furthest[offset + k + 1]) {
                    x = furthest[offset + k + 1]
                } else {
                    x = furthest[offset + k - 1] + 1
                }
                var y = x - k
                while x < n, y < m, equal(oldBase + x, newBase + y) {
                    x += 1
                    y += 1
                }
                furthest[offset + k] = x
                if x >= n, y >= m {
                    trail.append(Array(furthest[(offset - d)...(offset + d)]))
                    walkBack(trail, to: (n, m), piece: piece, into: &kept)
                    return true
                }
            }
            trail.append(Array(furthest[(offset - d)...(offset + d)]))
        }
        return false
    }

    /// Follows the trail from the end back to the start, keeping the lines of each diagonal run.
    private static func walkBack(
        _ trail: [[Int]], to end: (x: Int, y: Int), piece: Piece, into kept: inout KeptLines
    ) {
        var (x, y) = end
        for d in stride(from: trail.count - 1, through: 0, by: -1) {
            let k = x - y
            var startX = 0
            var startY = 0
            if d > 0 {
                let previous = trail[d - 1]  // k' in -(d-1)...(d-1) at index k' + d - 1
                let down = k == -d || (k != d && previous[k - 1 + d - 1] < previous[k + 1 + d - 1])
                let previousK = down ? k + 1 : k - 1
                let previousX = previous[previousK + d - 1]
                let previousY = previousX - previousK
                (startX, startY) = down ? (previousX, previousY + 1) : (previousX + 1, previousY)
                while x > startX, y > startY {
                    x -= 1
                    y -= 1
                    kept.keep(piece.old.lowerBound + x, piece.new.lowerBound + y)
                }
                (x, y) = (previousX, previousY)
            } else {
                while x > 0, y > 0 {
                    x -= 1
                    y -= 1
                    kept.keep(piece.old.lowerBound + x, piece.new.lowerBound + y)
                }
            }
        }
    }
}
