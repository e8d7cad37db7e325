import DocumentKit
import Foundation

/// Why a file holding a credential could not be used: names the file, never what it holds.
struct CredentialsFileFailure: Error, CustomStringConvertible {
    var description: String
}

/// A file holding a password (or a vault's passphrase) on its first line, as `--password-file`
/// (`--passphrase-file`) names it: refused unless
/// only its owner can read it, so that a password is never read from a file others can read too.
enum PasswordFile {
    /// The password: the file's first line, without its line end.
    ///
    /// - Throws: ``CredentialsFileFailure`` when the file is missing, not a file, readable by
    ///   others, or unreadable.
    static func read(_ url: URL, holding what: String = "password") throws(CredentialsFileFailure) -> String {
        guard let status = FileStatus(path: url.path) else {
            throw CredentialsFileFailure(description: "the \(what) file \(url.path) does not exist")
        }
        guard status.isRegularFile else {
            throw CredentialsFileFailure(description: "the \(what) file \(url.path) is not a file")
        }
        guard status.permissions & 0o077 == 0 else {
            throw CredentialsFileFailure(
                description:
                    "the \(what) file \(url.path) can be read by others (mode \(String(status.permissions & 0o777, radix: 8))); "
                    + "make it private with chmod 600")
        }
        guard status.size <= 64 << 10 else {
            throw CredentialsFileFailure(description: "the \(what) file \(url.path) is larger than 64 KiB")
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CredentialsFileFailure(description: "the \(what) file \(url.path) cannot be read")
        }
        let text = String(decoding: data, as: UTF8.self)
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
    }
}
