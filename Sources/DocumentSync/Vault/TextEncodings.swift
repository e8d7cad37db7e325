import Foundation

/// Base64 with the URL and file name safe alphabet (RFC 4648 section 5): how the vault spells
/// encrypted names and the signature of its configuration.
///
/// Foundation's base64 with `-` and `_` in place of `+` and `/`.
///
/// For example:
///
/// ```swift
/// Base64URL.encode(Data([0xfb, 0xff]))               // "-_8="
/// Base64URL.encode(Data([0xfb, 0xff]), padded: false) // "-_8"
/// ```
public enum Base64URL {
    /// `data` in base64url, with `=` padding unless `padded` is false.
    public static func encode(_ data: Data, padded: Bool = true) -> String {
        var text = data.base64EncodedString()
        text = String(
            text.unicodeScalars.compactMap { scalar -> Character? in
                switch scalar {
                case "+": return "-"
                case "/": return "_"
                case "=": return padded ? "=" : nil
                default: return Character(scalar)
                }
            })
        return text
    }

    /// The bytes `text` spells in base64url, padded or not; nil for anything else (other
    /// characters, a length no encoding has, or a spelling that is not the one ``encode(_:padded:)``
    /// gives, so that no two names decode to the same bytes).
    public static func decode(_ text: String) -> Data? {
        let unpadded =
            text.hasSuffix("==") ? text.dropLast(2) : text.hasSuffix("=") ? text.dropLast() : Substring(text)
        guard
            unpadded.unicodeScalars.allSatisfy({
                ("A"..."Z").contains($0) || ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                    || $0 == "_"
            })
        else { return nil }
        guard let data = decodeAnyAlphabet(String(unpadded)) else { return nil }
        // Padded input must have exactly the padding the encoder gives.
        guard encode(data, padded: text != unpadded) == text else { return nil }
        return data
    }

    /// The bytes `text` spells in base64 of either alphabet, padded or not (a JSON Web Token's
    /// parts as written by others, which differ in both); nil for anything else.
    public static func decodeAnyAlphabet(_ text: String) -> Data? {
        var standard = String(
            text.unicodeScalars.map { scalar -> Character in
                switch scalar {
                case "-": return "+"
                case "_": return "/"
                default: return Character(scalar)
                }
            })
        while standard.hasSuffix("=") { standard.removeLast() }
        guard standard.utf8.count % 4 != 1 else { return nil }
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard)
    }
}

/// Base32 (RFC 4648 section 6, the upper-case alphabet, `=` padding): how the vault spells the
/// hash of a directory ID in its folder's path. Neither libcrypto nor Foundation has it.
///
/// For example:
///
/// ```swift
/// Base32.encode(Data("foobar".utf8))  // "MZXW6YTBOI======"
/// ```
public enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// `data` in base32, padded with `=` to a multiple of eight characters.
    public static func encode(_ data: Data) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((data.count + 4) / 5 * 8)
        var buffer: UInt64 = 0
        var bits = 0
        for byte in data {
            buffer = buffer << 8 | UInt64(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int(buffer >> UInt64(bits) & 0x1F)])
            }
        }
        if bits > 0 { output.append(alphabet[Int(buffer << UInt64(5 - bits) & 0x1F)]) }
        while output.count % 8 != 0 { output.append(UInt8(ascii: "=")) }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes `text` spells in padded base32; nil for anything else (lower case, a wrong
    /// length or padding, bits left over that are not zero).
    public static func decode(_ text: String) -> Data? {
        let characters = Array(text.utf8)
        guard characters.count % 8 == 0 else { return nil }
        let padding = characters.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        // The only paddings a whole number of bytes leaves: 0, 1, 3, 4 or 6 characters.
        guard [0, 1, 3, 4, 6].contains(padding) else { return nil }
        var output = Data()
        var buffer: UInt64 = 0
        var bits = 0
        for character in characters.dropLast(padding) {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = buffer << 5 | UInt64(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(buffer >> UInt64(bits) & 0xFF))
            }
        }
        guard buffer & ((1 << UInt64(bits)) - 1) == 0 else { return nil }
        return output
    }
}
