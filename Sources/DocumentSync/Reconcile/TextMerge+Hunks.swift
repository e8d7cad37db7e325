extension TextMerge {
    /// A run of base lines that one side replaced with some of its own lines (``LineDiff``'s
    /// hunk: `old` is the base's lines, `new` the side's).
    typealias Hunk = LineDiff.Hunk

    /// What ``combine(base:mine:theirs:)`` gives.
    enum Combination: Equatable {
        /// The merged text's lines.
        case merged([Int])
        /// The spans of base lines that both sides changed differently, in order.
        case overlapping([Range<Int>])
    }

    /// One part of two sides' changes combined, in order.
    enum Part: Equatable {
        /// Settled lines: the base's, one side's change, or a change both sides made alike.
        case lines([Int])
        /// Base lines both sides changed differently, with each side's lines for them.
        case overlap(base: Range<Int>, mine: [Int], theirs: [Int])
    }

    /// The hunks that turn `base` into `side`, in order (``LineDiff``). Two hunks never
    /// touch: between any two, at least one base line is kept.
    static func hunks(from base: [Int], to side: [Int]) -> [Hunk] {
        LineDiff.hunks(from: base, to: side, mostEdits: LineDiff.mostEdits)
    }

    /// Combines the changes from `base` to `mine` and from `base` to `theirs`, diff3-style:
    /// see ``parts(base:mine:theirs:)``.
    static func combine(base: [Int], mine: [Int], theirs: [Int]) -> Combination {
        var merged: [Int] = []
        var overlaps: [Range<Int>] = []
        for part in parts(base: base, mine: mine, theirs: theirs) {
            switch part {
            case .lines(let lines): merged += lines
            case .overlap(let span, _, _): overlaps.append(span)
            }
        }
        return overlaps.isEmpty ? .merged(merged) : .overlapping(overlaps)
    }

    /// The changes from `base` to `mine` and from `base` to `theirs`, combined part by part.
    ///
    /// The hunks of both sides, in base order, fall into groups whose base spans overlap or
    /// touch (an insertion at a span's edge touches it). A group of one side's hunk is that
    /// side's change. A group with hunks of both sides merges only when both sides' versions
    /// of its span are the same lines, and is an overlap otherwise.
    static func parts(base: [Int], mine: [Int], theirs: [Int]) -> [Part] {
        let sides = [mine, theirs]
        let tagged =
            (hunks(from: base, to: mine).map { (side: 0, hunk: $0) }
            + hunks(from: base, to: theirs).map { (side: 1, hunk: $0) })
            .sorted {
                ($0.hunk.old.lowerBound, $0.hunk.old.upperBound, $0.side)
                    < ($1.hunk.old.lowerBound, $1.hunk.old.upperBound, $1.side)
            }
        var parts: [Part] = []
        var settled: [Int] = []
        var kept = 0  // base lines before this are in `parts` (or replaced)
        var next = 0
        while next < tagged.count {
            var span = tagged[next].hunk.old
            var group = [[Hunk]](repeating: [], count: 2)
            repeat {
                let (side, hunk) = tagged[next]
                span = span.lowerBound..<max(span.upperBound, hunk.old.upperBound)
                group[side].append(hunk)
                next += 1
            } while next < tagged.count && tagged[next].hunk.old.lowerBound <= span.upperBound
            settled += base[kept..<span.lowerBound]
            kept = span.upperBound
            let versions = (0..<2).map { version(of: span, in: base, side: sides[$0], hunks: group[$0]) }
            if group[1].isEmpty {
                settled += versions[0]
            } else if group[0].isEmpty || versions[0] == versions[1] {
                settled += versions[1]
            } else {
                parts.append(.lines(settled))
                settled = []
                parts.append(.overlap(base: span, mine: versions[0], theirs: versions[1]))
            }
        }
        settled += base[kept...]
        parts.append(.lines(settled))
        return parts.filter { $0 != .lines([]) }
    }

    /// One side's lines for the base lines `span`: the base's, with the side's `hunks` (those
    /// inside the span, in order) applied.
    private static func version(of span: Range<Int>, in base: [Int], side: [Int], hunks: [Hunk]) -> [Int] {
        var lines: [Int] = []
        var position = span.lowerBound
        for hunk in hunks {
            lines += base[position..<hunk.old.lowerBound]
            lines += side[hunk.new]
            position = hunk.old.upperBound
        }
        lines += base[position..<span.upperBound]
        return lines
    }
}
