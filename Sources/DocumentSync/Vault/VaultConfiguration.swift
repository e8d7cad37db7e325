import Foundation

/// `vault.cryptomator`: the vault's configuration as a JSON Web Token signed with HMAC-SHA256
/// under the master keys, so that a server cannot change it (a lower shortening threshold,
/// another cipher) without the keys.
///
/// The claims of vault format 8: `format` 8, `shorteningThreshold` (220), `cipherCombo`
/// `SIV_GCM` (AES-SIV names, AES-GCM contents) and `jti`, the vault's ID. The header's `kid`
/// names the masterkey file, `masterkeyfile:masterkey.cryptomator`.
///
/// For example:
///
/// ```swift
/// let token = try VaultConfiguration().signed(with: keys)
/// let configuration = try VaultConfiguration(verifying: token, keys: keys, vault: "notes")
/// ```
public struct VaultConfiguration: Sendable, Equatable {
    /// The file's name at the top of the vault.
    public static let fileName = "vault.cryptomator"
    /// The only key ID this program takes: the masterkey file beside the configuration.
    public static let masterkeyFileKeyID = "masterkeyfile:" + VaultMasterkeyFile.fileName
    /// The vault format this program reads and writes.
    public static let format = 8
    /// The cipher combination of format 8.
    public static let cipherCombo = "SIV_GCM"
    /// The most bytes a configuration is read as: a real one is about 300.
    public static let sizeLimit = 64 << 10

    /// The vault's ID (the token's `jti`), a random UUID when this program makes the vault.
    public var vaultID: String
    /// Encrypted names longer than this many characters (`.c9r` included) are stored shortened.
    public var shorteningThreshold: Int

    /// A configuration for a new vault.
    public init(vaultID: String = UUID().uuidString.lowercased(), shorteningThreshold: Int = 220) {
        self.vaultID = vaultID
        self.shorteningThreshold = shorteningThreshold
    }

    /// The token to write as `vault.cryptomator`: header, claims and signature, each base64url
    /// without padding, joined by dots.
    public func signed(with keys: VaultMasterKeys) -> Data {
        let header = ["alg": "HS256", "kid": Self.masterkeyFileKeyID, "typ": "JWT"]
        let claims = Claims(
            format: Self.format, shorteningThreshold: shorteningThreshold, jti: vaultID,
            cipherCombo: Self.cipherCombo)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings and integers always encode.
        let signedPart =
            Base64URL.encode(try! encoder.encode(header), padded: false) + "."
            + Base64URL.encode(try! encoder.encode(claims), padded: false)
        let signature = Digests.hmacSHA256(Data(signedPart.utf8), key: keys.signingKey)
        return Data((signedPart + "." + Base64URL.encode(signature, padded: false)).utf8)
    }

    /// The key ID in `token`'s header, read before the keys are known (it says where they are)
    /// and so not yet authenticated. This program takes only ``masterkeyFileKeyID``.
    ///
    /// - Throws: ``VaultError`` naming `vault`: `.malformedConfiguration` for what is no token;
    ///   `.unsupportedConfiguration` for another algorithm or key ID.
    public static func checkedKeyID(of token: Data, vault: String) throws -> String {
        try Parts(token, vault: vault).keyID
    }

    /// The configuration in `token`, once its signature verifies under `keys`.
    ///
    /// - Parameters:
    ///   - vault: How errors name the vault.
    /// - Throws: ``VaultError`` naming `vault`: `.malformedConfiguration` for what is no token of
    ///   this shape; `.unsupportedConfiguration` for an algorithm other than HS256, a key ID
    ///   other than ``masterkeyFileKeyID``, a format other than 8 or a cipher combination other
    ///   than `SIV_GCM`; `.forgedConfiguration` if the signature does not verify.
    public init(verifying token: Data, keys: VaultMasterKeys, vault: String) throws {
        let parts = try Parts(token, vault: vault)
        let expected = Digests.hmacSHA256(Data(parts.signedPart.utf8), key: keys.signingKey)
        guard Digests.constantTimeEqual(expected, parts.signature) else {
            throw VaultError(.forgedConfiguration, item: vault)
        }
        let claims: Claims
        do {
            claims = try JSONDecoder().decode(Claims.self, from: parts.claims)
        } catch {
            throw VaultError(.malformedConfiguration, item: vault, "the claims are not format 8's")
        }
        guard claims.format == Self.format else {
            throw VaultError(.unsupportedConfiguration, item: vault, "vault format \(claims.format), not 8")
        }
        guard claims.cipherCombo == Self.cipherCombo else {
            throw VaultError(
                .unsupportedConfiguration, item: vault,
                "cipher combination \(VaultError.shown(claims.cipherCombo)), not SIV_GCM")
        }
        // Shorter than the shortest encrypted name would shorten every name; longer than file
        // systems take would shorten none that needs it.
        guard (36...1024).contains(claims.shorteningThreshold) else {
            throw VaultError(
                .unsupportedConfiguration, item: vault, "shortening threshold \(claims.shorteningThreshold)")
        }
        guard !claims.jti.isEmpty, claims.jti.utf8.count <= 256 else {
            throw VaultError(.malformedConfiguration, item: vault, "no vault ID")
        }
        vaultID = claims.jti
        shorteningThreshold = claims.shorteningThreshold
    }

    private struct Claims: Codable {
        var format: Int
        var shorteningThreshold: Int
        var jti: String
        var cipherCombo: String
    }

    /// A token split and its header checked; the claims not yet trusted.
    private struct Parts {
        let signedPart: String
        let claims: Data
        let signature: Data
        let keyID: String

        init(_ token: Data, vault: String) throws {
            func malformed(_ detail: String) -> VaultError {
                VaultError(.malformedConfiguration, item: vault, detail)
            }
            guard token.count <= VaultConfiguration.sizeLimit else { throw malformed("\(token.count) bytes") }
            guard let text = String(data: token, encoding: .utf8) else { throw malformed("not UTF-8") }
            // A final newline is how some editors save a file; nothing else around the token.
            let trimmed = text.hasSuffix("\n") ? String(text.dropLast()) : text
            let pieces = trimmed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard pieces.count == 3 else { throw malformed("not three dot-separated parts") }
            // pycryptomator writes the header and claims in standard base64 with padding, others
            // base64url without: both are taken, and the signature covers the text as written.
            guard let headerJSON = Base64URL.decodeAnyAlphabet(pieces[0]),
                let claims = Base64URL.decodeAnyAlphabet(pieces[1]),
                let signature = Base64URL.decodeAnyAlphabet(pieces[2])
            else { throw malformed("a part is not base64") }
            let header: [String: String]
            do {
                header = try JSONDecoder().decode([String: String].self, from: headerJSON)
            } catch {
                throw malformed("the header is not a JSON object of strings")
            }
            guard header["alg"] == "HS256" else {
                throw VaultError(
                    .unsupportedConfiguration, item: vault,
                    "signing algorithm \(VaultError.shown(header["alg"] ?? "none")), not HS256")
            }
            guard let keyID = header["kid"], keyID == VaultConfiguration.masterkeyFileKeyID else {
                throw VaultError(
                    .unsupportedConfiguration, item: vault,
                    "key ID \(VaultError.shown(header["kid"] ?? "none")), not \(VaultConfiguration.masterkeyFileKeyID)"
                )
            }
            guard header["typ"] == nil || header["typ"] == "JWT" else { throw malformed("typ is not JWT") }
            guard signature.count == 32 else {
                throw VaultError(.forgedConfiguration, item: vault, "no HS256 signature")
            }
            signedPart = pieces[0] + "." + pieces[1]
            self.claims = claims
            self.signature = signature
            self.keyID = keyID
        }
    }
}
