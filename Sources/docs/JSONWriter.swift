import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Appends JSON to a byte buffer by hand: ten thousand listing entries encode in a few
/// milliseconds, keys come out in the documented order, and nothing is escaped that need
/// not be.
struct JSONWriter {
    var bytes: [UInt8] = []

    init(reservingCapacity capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// A JSON string, escaping quotes, backslashes and control characters: C0 as JSON
    /// requires, and DEL and C1 too (U+009B acts as ESC [ on some terminals), so that nothing
    /// in the output can act on a terminal it is printed to.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        let utf8 = text.utf8
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            utf8.formIndex(after: &index)
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case UInt8(ascii: "\n"): raw("\\n")
            case UInt8(ascii: "\r"): raw("\\r")
            case UInt8(ascii: "\t"): raw("\\t")
            case 0..<0x20, 0x7F: unicodeEscape(byte)
            case 0xC2 where index != utf8.endIndex && (0x80...0x9F).contains(utf8[index]):
                unicodeEscape(utf8[index])
                utf8.formIndex(after: &index)
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `\u00XX` for a character below U+0100.
    private mutating func unicodeEscape(_ value: UInt8) {
        raw("\\u00")
        bytes.append(Self.hexDigit(value >> 4))
        bytes.append(Self.hexDigit(value & 0xF))
    }

    mutating func string(_ text: String?) {
        if let text { string(text) } else { raw("null") }
    }

    mutating func integer(_ value: some BinaryInteger) {
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// A key and its colon, after a comma unless it is the object's first key.
    mutating func key(_ name: StaticString) {
        if let last = bytes.last, last != UInt8(ascii: "{") { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        raw("\":")
    }

    /// An array of strings.
    mutating func strings(_ values: [String]) {
        raw("[")
        for (index, value) in values.enumerated() {
            if index > 0 { raw(",") }
            string(value)
        }
        raw("]")
    }

    /// The objects of an array, one per line, each written by `body` between its braces,
    /// and the array's closing bracket on a line of its own (the caller writes the `[`).
    mutating func objects<Items: Sequence>(_ items: Items, _ body: (inout JSONWriter, Items.Element) -> Void)
    {
        var first = true
        for item in items {
            raw(first ? "\n{" : ",\n{")
            first = false
            body(&self, item)
            raw("}")
        }
        raw("\n]")
    }

    /// A key and a string value (or null).
    mutating func field(_ name: StaticString, _ value: String?) {
        key(name)
        string(value)
    }

    mutating func field(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    mutating func field(_ name: StaticString, _ value: some BinaryInteger) {
        key(name)
        integer(value)
    }

    /// A key and a time, as ``timestamp(_:)`` writes it.
    mutating func field(_ name: StaticString, time value: Date?) {
        key(name)
        timestamp(value)
    }

    /// A UTC time as ISO 8601 with milliseconds: `2025-01-31T09:05:00.250Z`.
    mutating func timestamp(seconds: Int64, nanoseconds: Int64) {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        bytes.append(UInt8(ascii: "\""))
        digits(Int(parts.tm_year) + 1900, count: 4)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, count: 2)
        bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), count: 2)
        bytes.append(UInt8(ascii: "T"))
        digits(Int(parts.tm_hour), count: 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), count: 2)
        bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), count: 2)
        bytes.append(UInt8(ascii: "."))
        digits(Int(nanoseconds / 1_000_000), count: 3)
        raw("Z\"")
    }

    mutating func timestamp(_ date: Date?) {
        guard let date else { return raw("null") }
        let interval = date.timeIntervalSince1970
        let seconds = interval.rounded(.down)
        timestamp(seconds: Int64(seconds), nanoseconds: Int64((interval - seconds) * 1e9))
    }

    mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
    }

    private mutating func digits(_ value: Int, count: Int) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        var value = value
        if value >= divisor * 10 {
            bytes.append(contentsOf: String(value).utf8)
            return
        }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor))
            value %= divisor
            divisor /= 10
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}

/// Local times for people: `2025-01-31 10:05`.
enum LocalTime {
    /// "2026-12-01 20:54", or with `seconds` "2026-12-01 20:54:13", in local time.
    static func format(seconds: Int64, showingSeconds: Bool = false) -> String {
        var time = time_t(seconds)
        var parts = tm()
        localtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min))"
            + (showingSeconds ? ":\(two(parts.tm_sec))" : "")
    }

    static func format(_ date: Date?, seconds: Bool = false) -> String {
        guard let date else { return "(no date)" }
        return format(seconds: Int64(date.timeIntervalSince1970.rounded(.down)), showingSeconds: seconds)
    }
}
