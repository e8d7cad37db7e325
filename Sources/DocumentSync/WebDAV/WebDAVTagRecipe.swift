import CCrypto
import DocumentKit
import Foundation

/// How a server makes an ETag of a file's bytes, where its ETags are made of the bytes: then a
/// new file's tag is known from the bytes sent, without a request to read it, and it names
/// those bytes whoever writes the file after.
///
/// ``WebDAVProbe`` finds the recipe by comparing the ETags of the files it writes with each
/// recipe's, and keeps none that does not give all of them.
///
/// For example:
///
/// ```swift
/// WebDAVTagRecipe.sha1Base64.etag(of: Data("mine\n".utf8))   // "27M7kd09m0XJKXZeHkDtsry+NHg="
/// ```
public enum WebDAVTagRecipe: String, Sendable, Codable, CaseIterable {
    /// Apache's `FileETag Digest`: the SHA-1 of the bytes in base64.
    case sha1Base64
    /// SabreDAV's: the MD5 of the bytes in hex.
    case md5Hex
    /// The MD5 of the bytes in base64.
    case md5Base64
    /// The SHA-256 of the bytes in hex.
    case sha256Hex

    /// The ETag the recipe makes of `bytes`, without quotes.
    public func etag(of bytes: Data) -> String {
        let algorithm: OpaquePointer? =
            switch self {
            case .sha1Base64: EVP_sha1()
            case .md5Hex, .md5Base64: EVP_md5()
            case .sha256Hex: EVP_sha256()
            }
        let made = LibCrypto.digest(of: bytes, by: algorithm)
        switch self {
        case .sha1Base64, .md5Base64: return Data(made).base64EncodedString()
        case .md5Hex, .sha256Hex: return LibCrypto.hex(made)
        }
    }

    /// The first recipe that makes each of the tags `written` of the bytes it pairs them with.
    static func found(in written: [(bytes: Data, tag: RemoteTag)]) -> WebDAVTagRecipe? {
        guard !written.isEmpty else { return nil }
        return allCases.first { recipe in
            written.allSatisfy { WebDAVRemote.tag("\"\(recipe.etag(of: $0.bytes))\"") == $0.tag }
        }
    }
}
