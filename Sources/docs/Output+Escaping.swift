extension Output {
    /// `text` as human output shows it: each control character (C0, DEL and C1) and each
    /// backslash written as a C escape, as `ls -b` does, so that a file name can neither act
    /// on the terminal nor break a one-line listing. Spaces, unlike with `ls -b`, stay spaces.
    ///
    /// `\a \b \t \n \v \f \r` for those seven, `\\` for a backslash, and `\ooo` (three octal
    /// digits) for each byte of any other control character, so that the escape character is
    /// `\033` and U+009B is `\302\233`. That is the syntax of bash's `$'…'`, which turns a
    /// listed name back into the name: `docs show $'ctl\033[31mred'`.
    ///
    /// For example:
    ///
    /// ```swift
    /// Output.escaped("two\nlines")   // "two\\nlines"
    /// ```
    static func escaped(_ text: String) -> String {
        // 0xC2 leads every C1 control in UTF-8, and a few printable characters too.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0x5C || $0 == 0xC2 }) else {
            return text
        }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\u{07}": escaped += "\\a"
            case "\u{08}": escaped += "\\b"
            case "\t": escaped += "\\t"
            case "\n": escaped += "\\n"
            case "\u{0B}": escaped += "\\v"
            case "\u{0C}": escaped += "\\f"
            case "\r": escaped += "\\r"
            case _ where scalar.properties.generalCategory == .control:
                for byte in String(scalar).utf8 {
                    escaped += "\\"
                    escaped += String(byte >> 6) + String((byte >> 3) & 7) + String(byte & 7)
                }
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
