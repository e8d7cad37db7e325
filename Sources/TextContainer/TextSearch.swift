import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the editor looks for: a text, matched with or without regard to case, anywhere or
/// only as a whole word, over a ``TextBuffer``'s lines.
///
/// Matching runs on UTF-8 bytes (`memmem`) and keeps only matches that start and end on
/// grapheme-cluster boundaries, so a 20 MiB document is searched in a fraction of a second
/// and "e" never matches half of "é" written as e plus a combining accent. A value type with
/// no state, so that a search runs off the main actor on a copy of the lines.
///
/// For example:
///
/// ```swift
/// let search = TextSearch("cat", isCaseSensitive: false, matchesWholeWords: true)
/// search.matches(in: "Cat concatenate cat")      // [0..<3, 16..<19]
/// let (lines, count) = search.replacingAll(in: buffer.lines, with: "dog")
/// ```
public struct TextSearch: Sendable, Equatable {
    /// The text looked for; an empty one matches nothing.
    public var needle: String
    public var isCaseSensitive: Bool
    /// Whether a match must not have a letter, digit or `_` right before or after it.
    public var matchesWholeWords: Bool

    public init(_ needle: String, isCaseSensitive: Bool = false, matchesWholeWords: Bool = false) {
        self.needle = needle
        self.isCaseSensitive = isCaseSensitive
        self.matchesWholeWords = matchesWholeWords
    }

    /// The matches in `line`, left to right and not overlapping, as character offsets.
    public func matches(in line: String) -> [Range<Int>] {
        guard !needle.isEmpty else { return [] }
        let pattern = isCaseSensitive ? needle : needle.lowercased()
        let haystack = isCaseSensitive ? line : line.lowercased()
        // Folding that changed a byte length would shift the offsets: that rare line is
        // searched by Foundation instead.
        guard haystack.utf8.count == line.utf8.count else { return foldedMatches(in: line) }
        var result: [Range<Int>] = []
        var from = 0
        var counted = (index: line.startIndex, offset: 0)
        let patternBytes = Array(pattern.utf8)
        let haystackBytes =
            haystack.utf8.withContiguousStorageIfAvailable { Array($0) } ?? Array(haystack.utf8)
        while let found = Self.bytes(patternBytes, in: haystackBytes, from: from) {
            let lowerUTF8 = line.utf8.index(line.utf8.startIndex, offsetBy: found)
            let upperUTF8 = line.utf8.index(lowerUTF8, offsetBy: patternBytes.count)
            guard let lower = String.Index(lowerUTF8, within: line),
                let upper = String.Index(upperUTF8, within: line),
                isCaseSensitive || line[lower..<upper].lowercased() == pattern,
                !matchesWholeWords || isWholeWord(lower..<upper, in: line)
            else {
                from = found + 1
                continue
            }
            counted.offset += line.distance(from: counted.index, to: lower)
            counted.index = lower
            let length = line.distance(from: lower, to: upper)
            result.append(counted.offset..<(counted.offset + length))
            from = found + patternBytes.count
        }
        return result
    }

    /// The first match at or after `start` going forward (wrapping round past the end), or
    /// the last one before `start` going backward (wrapping round past the top).
    ///
    /// - Parameter isCancelled: Asked every thousand lines; a search stopped early finds nothing.
    public func firstMatch(
        in lines: [String], from start: TextBuffer.Position, backwards: Bool = false,
        isCancelled: () -> Bool = { false }
    ) -> Range<TextBuffer.Position>? {
        guard !needle.isEmpty, !lines.isEmpty else { return nil }
        let count = lines.count
        let startLine = min(max(0, start.line), count - 1)
        for step in 0...count {
            if step % 1000 == 999, isCancelled() { return nil }
            let lineIndex =
                backwards ? ((startLine - step) % count + count) % count : (startLine + step) % count
            let found = matches(in: lines[lineIndex])
            // The first step looks past the start; the last comes back to the start line for
            // what lies on the other side of it.
            let candidates: [Range<Int>]
            switch (step, backwards) {
            case (0, false): candidates = found.filter { $0.lowerBound >= start.offset }
            case (0, true): candidates = found.filter { $0.lowerBound < start.offset }
            case (count, false): candidates = found.filter { $0.lowerBound < start.offset }
            case (count, true): candidates = found.filter { $0.lowerBound >= start.offset }
            default: candidates = found
            }
            guard let match = backwards ? candidates.last : candidates.first else { continue }
            return TextBuffer.Position(
                line: lineIndex, offset: match.lowerBound)..<TextBuffer.Position(
                    line: lineIndex, offset: match.upperBound)
        }
        return nil
    }

    /// `lines` with every match replaced by `replacement`, and how many there were.
    ///
    /// - Parameter isCancelled: Asked every thousand lines; a replacement stopped early
    ///   returns nil.
    public func replacingAll(
        in lines: [String], with replacement: String, isCancelled: () -> Bool = { false }
    ) -> (lines: [String], count: Int)? {
        var result = lines
        var count = 0
        for (lineIndex, line) in lines.enumerated() {
            if lineIndex % 1000 == 999, isCancelled() { return nil }
            let found = matches(in: line)
            guard !found.isEmpty else { continue }
            count += found.count
            var replaced = ""
            var index = line.startIndex
            var offset = 0
            for match in found {
                let lower = line.index(index, offsetBy: match.lowerBound - offset)
                replaced += line[index..<lower]
                replaced += replacement
                index = line.index(lower, offsetBy: match.count)
                offset = match.upperBound
            }
            replaced += line[index...]
            result[lineIndex] = replaced
        }
        return (result, count)
    }

    private func isWholeWord(_ range: Range<String.Index>, in line: String) -> Bool {
        if range.lowerBound != line.startIndex,
            TextBuffer.characterClass(line[line.index(before: range.lowerBound)]) == .word
        {
            return false
        }
        if range.upperBound != line.endIndex, TextBuffer.characterClass(line[range.upperBound]) == .word {
            return false
        }
        return true
    }

    /// The slow path of ``matches(in:)``, for a line whose case folding changes its length.
    private func foldedMatches(in line: String) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var searchStart = line.startIndex
        while searchStart < line.endIndex,
            let found = line.range(
                of: needle, options: [.caseInsensitive], range: searchStart..<line.endIndex)
        {
            if !matchesWholeWords || isWholeWord(found, in: line) {
                let lower = line.distance(from: line.startIndex, to: found.lowerBound)
                result.append(lower..<(lower + line.distance(from: found.lowerBound, to: found.upperBound)))
                searchStart = found.upperBound
            } else {
                searchStart = line.index(after: found.lowerBound)
            }
        }
        return result
    }

    /// The byte offset of the first `pattern` in `bytes` at or after `from`.
    private static func bytes(_ pattern: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
        guard from + pattern.count <= bytes.count else { return nil }
        return bytes.withUnsafeBytes { hay in
            pattern.withUnsafeBytes { needle -> Int? in
                guard let base = hay.baseAddress,
                    let found = findBytes(base + from, hay.count - from, needle.baseAddress, needle.count)
                else { return nil }
                return base.distance(to: UnsafeRawPointer(found))
            }
        }
    }
}

// The C library's memmem(3), a GNU extension Glibc's Swift module does not export.
@_silgen_name("memmem")
private func findBytes(
    _ haystack: UnsafeRawPointer?, _ haystackLength: Int, _ needle: UnsafeRawPointer?, _ needleLength: Int
) -> UnsafeMutableRawPointer?
