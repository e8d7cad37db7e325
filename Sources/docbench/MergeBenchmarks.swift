import DocumentSync
import Foundation

/// A text of `count` different lines of about 30 bytes, the same for the same seed.
private func prose(_ count: Int, seed: UInt64) -> [String] {
    let words = ["sync", "notes", "merge", "device", "line", "draft", "text", "laptop", "today", "edit"]
    var state = seed
    return (0..<count).map { index in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let pick = { (shift: UInt64) in words[Int((state >> shift) % UInt64(words.count))] }
        return "\(index) \(pick(33)) \(pick(41)) \(pick(49)) \(pick(57))"
    }
}

/// `lines` with `edits` lines replaced, spread evenly from `offset` on.
private func edited(_ lines: [String], edits: Int, offset: Int, tag: String) -> [String] {
    var result = lines
    let step = lines.count / edits
    for index in stride(from: offset, to: lines.count, by: step) { result[index] = "\(tag) \(index)" }
    return result
}

private func joined(_ lines: [String]) -> String { lines.joined(separator: "\n") + "\n" }

/// Runs `arguments` and returns what it printed: a peer's whole run, as a process.
private func output(of arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    let pipe = Pipe()
    process.standardOutput = pipe
    try BenchmarkRun.start(process)
    let printed = pipe.fileHandleForReading.readDataToEndOfFile()
    BenchmarkRun.wait(for: process)
    // diff and diff3 exit 1 when they find differences or conflicts.
    guard process.terminationStatus <= 1 else { throw CocoaError(.executableLoad) }
    return String(decoding: printed, as: UTF8.self)
}

/// `diff.lines.100k.scattered` and `.unrelated`: the line diff ste's conflict screen draws
/// (``LineDiff`` of the two texts' lines, which ste holds as strings, as `ConflictComparison`
/// diffs them) against GNU diff of the same two files, as a process (its whole wall time). Both must find
/// the same number of changed lines where the diff is minimal (scattered edits); for two
/// unrelated texts LineDiff stops at its bound, and both must call every line changed.
func benchmarkLineDiff(iterations: Int, unrelated: Bool) throws -> BenchmarkRow {
    let folder = try scratchFolder("linediff")
    defer { try? FileManager.default.removeItem(at: folder) }
    let count = 100_000
    let old = prose(count, seed: 1)
    let new =
        unrelated
        ? prose(count, seed: 2).map { "other " + $0 } : edited(old, edits: 200, offset: 7, tag: "new")
    let (oldText, newText) = (joined(old), joined(new))
    let (oldURL, newURL) = (
        folder.appendingPathComponent("old.txt"), folder.appendingPathComponent("new.txt")
    )
    try Data(oldText.utf8).write(to: oldURL)
    try Data(newText.utf8).write(to: newURL)
    var ours = 0
    var theirs = 0
    let (measured, floor) = try interleavedMedians(
        iterations,
        measured: {
            let hunks = LineDiff.hunks(from: old, to: new)
            ours = hunks.reduce(0) { $0 + $1.old.count + $1.new.count }
        },
        floor: {
            theirs = try output(of: ["/usr/bin/diff", oldURL.path, newURL.path])
                .split(separator: "\n").filter { $0.hasPrefix("<") || $0.hasPrefix(">") }.count
        })
    guard ours == theirs else {
        throw CocoaError(
            .fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "\(ours) != \(theirs) lines"])
    }
    let ratio = measured / floor
    return BenchmarkRow(
        name: unrelated ? "diff.lines.100k.unrelated" : "diff.lines.100k.scattered", unit: "ms",
        value: measured * 1000, floor: floor * 1000,
        floorDescription:
            "GNU diff of the same two files (\(unrelated ? "unrelated" : "200 lines changed")), as a process; \(ours) lines changed in both (\(iterations) runs each)",
        ratio: ratio, target: "under 100 ms: the conflict screen opens at once", met: measured < 0.1)
}

/// `merge.marked.100k`: ``TextMerge/markedMerge(base:mine:theirs:labels:)`` of a 100,000-line
/// base and two sides with 100 scattered edits each, 10 of them on the same lines, against
/// GNU `diff3 -m` of the same three files, as a process. Both must mark the same 10 parts.
func benchmarkMarkedMerge(iterations: Int) throws -> BenchmarkRow {
    let folder = try scratchFolder("merge")
    defer { try? FileManager.default.removeItem(at: folder) }
    let base = prose(100_000, seed: 3)
    var mine = edited(base, edits: 100, offset: 11, tag: "mine")
    var theirs = edited(base, edits: 100, offset: 511, tag: "theirs")
    for index in stride(from: 5_003, to: base.count, by: 10_000) {
        mine[index] = "mine here \(index)"
        theirs[index] = "theirs here \(index)"
    }
    let texts = [base, mine, theirs].map { Data(joined($0).utf8) }
    let urls = ["base", "mine", "theirs"].map { folder.appendingPathComponent($0 + ".txt") }
    for (data, url) in zip(texts, urls) { try data.write(to: url) }
    var ours = 0
    var theirsMarked = 0
    let (measured, floor) = try interleavedMedians(
        iterations,
        measured: {
            guard
                case .merged(_, let overlaps) = TextMerge.markedMerge(
                    base: texts[0], mine: texts[1], theirs: texts[2], labels: ("this device", "laptop"))
            else { return }
            ours = overlaps
        },
        floor: {
            theirsMarked = try output(of: ["/usr/bin/diff3", "-m", urls[1].path, urls[0].path, urls[2].path])
                .split(separator: "\n").filter { $0.hasPrefix("<<<<<<<") }.count
        })
    guard ours == 10, theirsMarked == 10 else {
        throw CocoaError(
            .fileReadCorruptFile,
            userInfo: [NSLocalizedDescriptionKey: "\(ours) and \(theirsMarked) parts marked"])
    }
    let ratio = measured / floor
    return BenchmarkRow(
        name: "merge.marked.100k", unit: "ms", value: measured * 1000, floor: floor * 1000,
        floorDescription:
            "GNU diff3 -m of the same three files, as a process; 10 parts marked by both (\(iterations) runs each)",
        ratio: ratio, target: "under 200 ms: a merge key answers at once", met: measured < 0.2)
}
