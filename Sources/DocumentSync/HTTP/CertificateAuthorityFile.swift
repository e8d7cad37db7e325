import CCrypto
import DocumentKit
import Foundation

/// A file of the certificate authorities a remote's server is checked against instead of the
/// system's (`--ca-file`): certificates in PEM, as curl's `--cacert` takes them (a private
/// authority's, or a self-signed server's own certificate, which then is the only one
/// trusted). It is read again at each new connection, so a renewed authority needs no new
/// setting.
///
/// Whoever can change the file can make sync trust a server of theirs, so it is refused
/// unless it and its folder are the user's (or root's) and no one else can write them.
enum CertificateAuthorityFile {
    /// The most bytes read (the system's whole bundle is about 200 KiB).
    static let largest = 16 << 20

    /// Checks that the file at `path` can serve, and returns how many certificates it holds.
    ///
    /// - Throws: ``CredentialsFileFailure`` naming the file when it is missing, not a file,
    ///   writable by others, too large, unreadable, or holds no certificate.
    @discardableResult
    static func check(_ path: String) throws(CredentialsFileFailure) -> Int {
        func refuse(_ why: String) -> CredentialsFileFailure {
            CredentialsFileFailure(description: "the certificate authority file \(path) \(why)")
        }
        guard path.hasPrefix("/") else { throw refuse("is not an absolute path") }
        // The file a link leads to, and the folder that holds it, are what is checked.
        let real = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let status = FileStatus(path: real) else { throw refuse("does not exist") }
        guard status.isRegularFile else { throw refuse("is not a file") }
        let folder = (real as NSString).deletingLastPathComponent
        for (what, status) in [("it", status), ("its folder", FileStatus(path: folder))] {
            guard let status else { continue }
            let mode = status.permissions & 0o777
            let shown = String(mode, radix: 8)
            guard status.owner == getuid() || status.owner == 0 else {
                throw refuse("belongs to another user, who could make sync trust any server")
            }
            // A folder others may write to but not rename in (/tmp's sticky bit) is safe.
            let sticky = status.mode & UInt32(S_ISVTX) != 0 && what == "its folder"
            guard mode & 0o022 == 0 || sticky else {
                throw refuse(
                    "can be changed by other users through \(what) (mode \(shown)), who could make sync trust any server; "
                        + "make \(what) writable by you only (chmod go-w)")
            }
        }
        guard status.size <= Int64(largest) else { throw refuse("is larger than 16 MiB") }
        guard let data = FileManager.default.contents(atPath: real) else { throw refuse("cannot be read") }
        let count = certificates(in: data)
        guard count > 0 else {
            throw refuse("holds no certificate (PEM, -----BEGIN CERTIFICATE-----, as curl --cacert takes)")
        }
        return count
    }

    /// How many PEM certificates libcrypto reads from `data`.
    static func certificates(in data: Data) -> Int {
        LibCrypto.prepare()
        return data.withUnsafeBytes { bytes -> Int in
            guard let base = bytes.baseAddress, let source = BIO_new_mem_buf(base, Int32(bytes.count)) else {
                return 0
            }
            defer { BIO_free(source) }
            var count = 0
            while let certificate = PEM_read_bio_X509_AUX(source, nil, nil, nil) {
                X509_free(certificate)
                count += 1
            }
            // The end of the data is an "error" libcrypto keeps for the thread: not ours.
            ERR_clear_error()
            return count
        }
    }
}
