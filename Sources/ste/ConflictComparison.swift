import DocumentSync

/// The two sides of a conflict side by side, lined up by a line diff (``LineDiff``): lines the
/// sides share face each other, and each part where they differ is a run of rows marked
/// ``Row/differs``, one side's lines facing the other's (or nothing, where a side has fewer).
struct ConflictComparison {
    /// One row of the comparison: a line of each side, or nil where the side has none there.
    struct Row: Equatable {
        var mine: String?
        var theirs: String?
        var differs: Bool
    }

    var rows: [Row] = []
    /// How many parts differ.
    var differingParts = 0

    init(mine: [String], theirs: [String]) {
        var kept = (mine: 0, theirs: 0)
        func same(until end: Int) {
            while kept.mine < end {
                rows.append(Row(mine: mine[kept.mine], theirs: theirs[kept.theirs], differs: false))
                kept.mine += 1
                kept.theirs += 1
            }
        }
        for hunk in LineDiff.hunks(from: mine, to: theirs) {
            same(until: hunk.old.lowerBound)
            differingParts += 1
            for offset in 0..<max(hunk.old.count, hunk.new.count) {
                rows.append(
                    Row(
                        mine: offset < hunk.old.count ? mine[hunk.old.lowerBound + offset] : nil,
                        theirs: offset < hunk.new.count ? theirs[hunk.new.lowerBound + offset] : nil,
                        differs: true))
            }
            kept = (hunk.old.upperBound, hunk.new.upperBound)
        }
        same(until: mine.count)
    }

    /// The first row of the first part that differs; 0 when none does.
    var firstDifference: Int { rows.firstIndex(where: \.differs) ?? 0 }
}
