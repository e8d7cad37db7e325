import Foundation

extension TextMerge {
    /// The lines of the three versions, each distinct line numbered once, so that the diff and
    /// the merge compare integers.
    ///
    /// A line is the bytes up to and including a "\n" (so "\r\n" ends a line as part of it), or
    /// the bytes after the last "\n" when the text does not end with one. Two lines have one
    /// number exactly when their bytes are equal.
    struct LineTable {
        /// The bytes of each distinct line, by number.
        private var lines: [ArraySlice<UInt8>] = []
        private var numbers: [LineBytes: Int] = [:]

        /// What ``add(_:)`` found.
        enum Addition {
            /// The text's lines, by number.
            case text([Int])
            /// Why the bytes are not text, as the end of a sentence whose subject is the
            /// version ("holds a NUL byte: it is binary, not text").
            case notText(String)
        }

        /// Splits `data` into lines and numbers them, or says why it is not text.
        mutating func add(_ data: Data) -> Addition {
            let bytes = [UInt8](data)
            let hasNUL = bytes.withUnsafeBytes { buffer in
                buffer.baseAddress.map { memchr($0, 0, buffer.count) != nil } ?? false
            }
            if hasNUL { return .notText("holds a NUL byte: it is binary, not text") }
            if String(validating: bytes, as: UTF8.self) == nil {
                return .notText("is not valid UTF-8 text")
            }
            var text: [Int] = []
            for range in Self.lineRanges(of: bytes) {
                let line = bytes[range]
                if let number = numbers[LineBytes(line)] {
                    text.append(number)
                } else {
                    numbers[LineBytes(line)] = lines.count
                    text.append(lines.count)
                    lines.append(line)
                }
            }
            return .text(text)
        }

        /// The bytes of the lines `numbers`, one after the other.
        func bytes(of numbers: [Int]) -> Data {
            var data = Data(capacity: numbers.reduce(0) { $0 + lines[$1].count })
            for number in numbers { data.append(contentsOf: lines[number]) }
            return data
        }

        /// Whether line `number` ends with "\n" (so with "\r\n" too); the last line of a text
        /// may not.
        func endsWithNewline(_ number: Int) -> Bool { lines[number].last == 0x0A }

        /// Whether line `number` ends with "\r\n".
        func endsWithCRLF(_ number: Int) -> Bool { lines[number].suffix(2).elementsEqual([0x0D, 0x0A]) }

        /// Where each line of `bytes` is, terminator included; none for empty bytes.
        private static func lineRanges(of bytes: [UInt8]) -> [Range<Int>] {
            bytes.withUnsafeBytes { buffer in
                guard let start = buffer.baseAddress else { return [] }
                var ranges: [Range<Int>] = []
                var offset = 0
                while offset < buffer.count {
                    let end =
                        memchr(start + offset, 0x0A, buffer.count - offset).map { start.distance(to: $0) + 1 }
                        ?? buffer.count
                    ranges.append(offset..<end)
                    offset = end
                }
                return ranges
            }
        }
    }

    /// A line's bytes as a dictionary key: compared with `memcmp` and hashed in one call, as a
    /// debug build would otherwise hash an `ArraySlice` one byte at a time. (A `String` key
    /// would make canonically equivalent lines, NFC and NFD, one line.)
    private struct LineBytes: Hashable {
        let bytes: ArraySlice<UInt8>

        init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

        static func == (lhs: LineBytes, rhs: LineBytes) -> Bool {
            guard lhs.bytes.count == rhs.bytes.count else { return false }
            return lhs.bytes.withUnsafeBytes { left in
                rhs.bytes.withUnsafeBytes { right in
                    left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
                }
            }
        }

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }
}
