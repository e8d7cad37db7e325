import Foundation

/// The three-way, line-by-line merge of a UTF-8 text document that both sides of a sync
/// changed since the base (the bytes last synced).
///
/// Each side's changes are found as Swift's `CollectionDifference` from the base's lines to
/// that side's lines, and turned into hunks: runs of base lines that the side replaced with
/// some of its own lines (an insertion replaces an empty run, a deletion puts no lines in).
/// Hunks of the two sides that overlap or touch are taken together; such a group merges only
/// when both sides made it give the very same lines (the same change made on both devices,
/// or the same lines deleted on both), and any other group is a conflict. A hunk no hunk of
/// the other side touches is applied as it is.
///
/// The rules, and why:
/// - Changes to neighbouring lines (one side changed line 3, the other line 4) are a conflict,
///   as they are for diff3 and git: nothing says that the two edits still make sense next to
///   each other, and a merge that guesses loses work silently, while a conflict keeps both
///   versions. The same holds for an insertion right before or after a line the other side
///   changed, and for different insertions at one place.
/// - Lines keep their terminators ("\n", or "\r\n" as part of the line), so the merged bytes
///   are exactly the bytes the combined edits give: CRLF stays CRLF, and a last line without
///   a newline stays without one. That last line is a line like any other: appending after
///   it changes it (it gains its "\n"), which is why an append conflicts with an edit of the
///   line before it, but not with edits further up.
/// - Lines are compared as bytes, never as `String`s: "é" in NFC and in NFD are different
///   lines, and the merge writes whichever bytes a side wrote.
/// - Only UTF-8 without NUL bytes is text. A side that is not, or is bigger than
///   ``mostBytes``, is a conflict whose reason says so.
///
/// Equal sides, and a side equal to the base, give their answer before anything is read as
/// text: `mine == theirs` merges to `mine`, an unchanged side merges to the other side,
/// whatever the bytes are.
///
/// The merge is deterministic, and costs about O(n·d) for n lines and d changed lines.
///
/// For example:
///
/// ```swift
/// let base = Data("one\ntwo\nthree\n".utf8)
/// let mine = Data("ONE\ntwo\nthree\n".utf8)
/// let theirs = Data("one\ntwo\nthree\nfour\n".utf8)
/// TextMerge.merge(base: base, mine: mine, theirs: theirs)
/// // .merged(Data("ONE\ntwo\nthree\nfour\n".utf8))
/// ```
package enum TextMerge {
    /// The most bytes of any of the three texts that are merged; bigger ones are conflicts.
    ///
    /// 4 MiB: far more than any text a person edits, and small enough that holding the three
    /// versions and their line tables costs little.
    package static let mostBytes = 4 << 20

    /// What a merge gives.
    package enum Outcome: Equatable, Sendable {
        /// Both sides' changes, combined; the bytes to write to both sides.
        case merged(Data)
        /// The changes overlap (or a side is not UTF-8 text, or too big): the caller keeps both
        /// versions.
        ///
        /// The reason is a sentence for a summary or a log, such as "mine and theirs both
        /// changed line 3 of the base".
        case conflict(reason: String)
    }

    /// Merges `mine` and `theirs`, both changed from `base`, line by line.
    ///
    /// - Parameters:
    ///   - base: The version both sides started from.
    ///   - mine: This device's version.
    ///   - theirs: The remote's version.
    /// - Returns: The merged bytes, or a conflict with its reason.
    package static func merge(base: Data, mine: Data, theirs: Data) -> Outcome {
        if mine == theirs { return .merged(mine) }
        if mine == base { return .merged(theirs) }
        if theirs == base { return .merged(mine) }
        return mergeLines(base: base, mine: mine, theirs: theirs)
    }

    /// The line merge itself, without ``merge(base:mine:theirs:)``'s shortcuts for equal
    /// versions: the tests run it on one-sided changes too.
    static func mergeLines(base: Data, mine: Data, theirs: Data) -> Outcome {
        let table: LineTable
        let lines: [[Int]]
        switch read([("base", base), ("mine", mine), ("theirs", theirs)]) {
        case .success(let read): (table, lines) = read
        case .failure(let failure): return .conflict(reason: failure.reason)
        }
        switch combine(base: lines[0], mine: lines[1], theirs: lines[2]) {
        case .merged(let numbers):
            return .merged(table.bytes(of: numbers))
        case .overlapping(let spans):
            return .conflict(reason: reason(for: spans))
        }
    }

    /// Why some bytes cannot be merged as text, as a sentence whose subject is the version
    /// ("theirs is not valid UTF-8 text").
    struct NotText: Error {
        var reason: String
    }

    /// The lines of each named version, numbered in one table; or why one is not text, or too
    /// big to read.
    static func read(_ versions: [(name: String, data: Data)]) -> Result<(LineTable, [[Int]]), NotText> {
        for (name, data) in versions where data.count > mostBytes {
            return .failure(
                NotText(
                    reason: "\(name) is \(data.count) bytes, more than the \(mostBytes) a text merge reads"))
        }
        var table = LineTable()
        var lines: [[Int]] = []
        for (name, data) in versions {
            switch table.add(data) {
            case .text(let numbers):
                lines.append(numbers)
            case .notText(let why):
                return .failure(NotText(reason: "\(name) \(why)"))
            }
        }
        return .success((table, lines))
    }

    /// Says where the sides' changes overlap, in the base's line numbers counted from 1.
    private static func reason(for spans: [Range<Int>]) -> String {
        let first = spans[0]
        let place: String
        if first.isEmpty {
            let insertion = first.lowerBound == 0 ? "at the start" : "after line \(first.lowerBound)"
            place = "inserted different lines \(insertion) of the base"
        } else if first.count == 1 {
            place = "changed line \(first.upperBound) of the base"
        } else {
            place = "changed lines \(first.lowerBound + 1)-\(first.upperBound) of the base"
        }
        let more = spans.count == 1 ? "" : " (and \(spans.count - 1) more overlapping changes)"
        return "mine and theirs both \(place)\(more)"
    }
}
