import Foundation

extension TextMerge {
    /// What a marked merge gives.
    package enum MarkedOutcome: Equatable, Sendable {
        /// The merged text, each part the two sides changed differently marked as git marks
        /// it, and how many such parts there are (0 for a clean merge).
        case merged(Data, overlaps: Int)
        /// A side is not UTF-8 text, or too big (the reason says which), and cannot be merged.
        case notText(reason: String)
    }

    /// Merges `mine` and `theirs` for a person to finish: what ``merge(base:mine:theirs:)``
    /// merges is merged the same way, and each part that both sides changed differently is
    /// kept whole, both sides' lines between markers that name them:
    ///
    /// ```text
    /// <<<<<<< this device
    /// my lines
    /// =======
    /// their lines
    /// >>>>>>> laptop
    /// ```
    ///
    /// Without a base (the version both sides started from is not known), every part where
    /// the two sides differ is marked: nothing says which side changed it.
    ///
    /// The markers end as the first line of `mine` ends ("\r\n" or "\n"). A side's last line
    /// without a newline gains one inside the markers, so that a marker starts a line. A label
    /// is one line: any control character in it becomes a space.
    ///
    /// - Parameters:
    ///   - base: The version both sides started from, or nil when it is not known.
    ///   - mine: This device's version.
    ///   - theirs: The other version.
    ///   - labels: Who made each side, for the markers.
    /// - Returns: The marked text and its number of marked parts, or why a side is not text.
    package static func markedMerge(
        base: Data?, mine: Data, theirs: Data, labels: (mine: String, theirs: String)
    ) -> MarkedOutcome {
        if mine == theirs { return .merged(mine, overlaps: 0) }
        if let base, mine == base { return .merged(theirs, overlaps: 0) }
        if let base, theirs == base { return .merged(mine, overlaps: 0) }
        var named: [(name: String, data: Data)] = [("mine", mine), ("theirs", theirs)]
        if let base { named.insert(("base", base), at: 0) }
        let table: LineTable
        let lines: [[Int]]
        switch read(named) {
        case .success(let read): (table, lines) = read
        case .failure(let failure): return .notText(reason: failure.reason)
        }
        let parts: [Part]
        if base != nil {
            parts = self.parts(base: lines[0], mine: lines[1], theirs: lines[2])
        } else {
            parts = twoWayParts(mine: lines[0], theirs: lines[1])
        }
        let mineLines = lines[lines.count - 2]
        let newline = Data((mineLines.first.map(table.endsWithCRLF) ?? false ? "\r\n" : "\n").utf8)
        func marker(_ text: String) -> Data { Data(text.utf8) + newline }
        func appendLines(_ numbers: [Int], to data: inout Data) {
            data += table.bytes(of: numbers)
            if let last = numbers.last, !table.endsWithNewline(last) { data += newline }
        }
        var merged = Data()
        var overlaps = 0
        for part in parts {
            switch part {
            case .lines(let numbers):
                merged += table.bytes(of: numbers)
            case .overlap(_, let mine, let theirs):
                overlaps += 1
                // A text whose last line has no newline, followed by a marker, would join them.
                if let last = merged.last, last != 0x0A { merged += newline }
                merged += marker("<<<<<<< " + oneLine(labels.mine))
                appendLines(mine, to: &merged)
                merged += marker("=======")
                appendLines(theirs, to: &merged)
                merged += marker(">>>>>>> " + oneLine(labels.theirs))
            }
        }
        return .merged(merged, overlaps: overlaps)
    }

    /// Every part where `mine` and `theirs` differ, as an overlap; the lines they share between.
    private static func twoWayParts(mine: [Int], theirs: [Int]) -> [Part] {
        var parts: [Part] = []
        var kept = 0
        for hunk in LineDiff.hunks(from: mine, to: theirs, mostEdits: LineDiff.mostEdits) {
            if kept < hunk.old.lowerBound { parts.append(.lines(Array(mine[kept..<hunk.old.lowerBound]))) }
            parts.append(
                .overlap(base: hunk.old, mine: Array(mine[hunk.old]), theirs: Array(theirs[hunk.new])))
            kept = hunk.old.upperBound
        }
        if kept < mine.count { parts.append(.lines(Array(mine[kept...]))) }
        return parts
    }

    /// `label` with each control character (a newline among them) as a space.
    private static func oneLine(_ label: String) -> String {
        String(
            String.UnicodeScalarView(
                label.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }
}
