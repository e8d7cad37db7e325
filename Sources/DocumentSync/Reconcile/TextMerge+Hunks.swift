extension TextMerge {
    /// A run of base lines that one side replaced with some of its own lines.
    ///
    /// An insertion replaces an empty run (`base` is empty, before the base line
    /// `base.lowerBound`); a deletion puts in no lines (`replacement` is empty).
    struct Hunk: Equatable {
        /// The base lines replaced, by index.
        var base: Range<Int>
        /// The side's lines put in their place, by index in the side.
        var replacement: Range<Int>
    }

    /// What ``combine(base:mine:theirs:)`` gives.
    enum Combination: Equatable {
        /// The merged text's lines.
        case merged([Int])
        /// The spans of base lines that both sides changed differently, in order.
        case overlapping([Range<Int>])
    }

    /// The hunks that turn `base` into `side`, in order, from the lines the two have in common
    /// according to `CollectionDifference`.
    ///
    /// Two hunks never touch: between any two, at least one base line is kept.
    static func hunks(from base: [Int], to side: [Int]) -> [Hunk] {
        var removed = [Bool](repeating: false, count: base.count)
        var inserted = [Bool](repeating: false, count: side.count)
        for change in side.difference(from: base) {
            switch change {
            case .remove(let offset, _, _): removed[offset] = true
            case .insert(let offset, _, _): inserted[offset] = true
            }
        }
        // The lines kept on both sides pair up in order (the n-th kept base line is the n-th kept
        // line of the side), so the hunks are what lies between one kept pair and the next.
        var hunks: [Hunk] = []
        var b = 0
        var s = 0
        while b < base.count || s < side.count {
            if b < base.count, s < side.count, !removed[b], !inserted[s] {
                b += 1
                s += 1
                continue
            }
            let start = (base: b, side: s)
            while b < base.count, removed[b] { b += 1 }
            while s < side.count, inserted[s] { s += 1 }
            precondition(start != (b, s), "CollectionDifference kept unequal numbers of lines")
            hunks.append(Hunk(base: start.base..<b, replacement: start.side..<s))
        }
        return hunks
    }

    /// Combines the changes from `base` to `mine` and from `base` to `theirs`, diff3-style.
    ///
    /// The hunks of both sides, in base order, fall into groups whose base spans overlap or
    /// touch (an insertion at a span's edge touches it). A group of one side's hunk is that
    /// side's change. A group with hunks of both sides merges only when both sides' versions
    /// of its span are the same lines, and is an overlap otherwise.
    static func combine(base: [Int], mine: [Int], theirs: [Int]) -> Combination {
        let sides = [mine, theirs]
        let tagged =
            (hunks(from: base, to: mine).map { (side: 0, hunk: $0) }
            + hunks(from: base, to: theirs).map { (side: 1, hunk: $0) })
            .sorted {
                ($0.hunk.base.lowerBound, $0.hunk.base.upperBound, $0.side)
                    < ($1.hunk.base.lowerBound, $1.hunk.base.upperBound, $1.side)
            }
        var merged: [Int] = []
        var overlaps: [Range<Int>] = []
        var kept = 0  // base lines before this are in `merged` (or replaced)
        var next = 0
        while next < tagged.count {
            var span = tagged[next].hunk.base
            var group = [[Hunk]](repeating: [], count: 2)
            repeat {
                let (side, hunk) = tagged[next]
                span = span.lowerBound..<max(span.upperBound, hunk.base.upperBound)
                group[side].append(hunk)
                next += 1
            } while next < tagged.count && tagged[next].hunk.base.lowerBound <= span.upperBound
            merged += base[kept..<span.lowerBound]
            kept = span.upperBound
            let versions = (0..<2).map { version(of: span, in: base, side: sides[$0], hunks: group[$0]) }
            if group[1].isEmpty {
                merged += versions[0]
            } else if group[0].isEmpty || versions[0] == versions[1] {
                merged += versions[1]
            } else {
                overlaps.append(span)
            }
        }
        merged += base[kept...]
        return overlaps.isEmpty ? .merged(merged) : .overlapping(overlaps)
    }

    /// One side's lines for the base lines `span`: the base's, with the side's `hunks` (those
    /// inside the span, in order) applied.
    private static func version(of span: Range<Int>, in base: [Int], side: [Int], hunks: [Hunk]) -> [Int] {
        var lines: [Int] = []
        var position = span.lowerBound
        for hunk in hunks {
            lines += base[position..<hunk.base.lowerBound]
            lines += side[hunk.replacement]
            position = hunk.base.upperBound
        }
        lines += base[position..<span.upperBound]
        return lines
    }
}
