import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

#if canImport(Glibc)
    import Glibc
#endif

/// `--ca-file`: a private certificate authority trusted for the one remote that names it (a
/// home NAS with its own authority), with the system's authorities trusted for every other,
/// and a file anyone else could change refused.
@Suite struct CertificateAuthorityFileTests {
    static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

    /// A copy of the system's bundle in a folder of the test's, mode 0644.
    private func bundle(in folder: TemporaryFolder) throws -> URL {
        let file = folder.file("ca.pem")
        try Data(contentsOf: URL(fileURLWithPath: Self.systemBundle)).write(to: file)
        chmod(file.path, 0o644)
        chmod(folder.url.path, 0o755)
        return file
    }

    private func refusal(_ path: String) -> String? {
        do {
            try CertificateAuthorityFile.check(path)
            return nil
        } catch { return error.description }
    }

    @Test func aFileOfCertificatesIsTakenAndItsCertificatesCounted() throws {
        let folder = try TemporaryFolder()
        let file = try bundle(in: folder)
        #expect(try CertificateAuthorityFile.check(file.path) > 50)
        // Through a link (as /etc/ssl/certs names each authority), the file it leads to is
        // what is checked.
        let link = folder.file("link.pem")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        #expect(refusal(link.path) == nil)
    }

    @Test func whatCannotServeIsRefusedNamingTheFile() throws {
        let folder = try TemporaryFolder()
        let file = try bundle(in: folder)
        let missing = folder.file("missing.pem").path
        #expect(refusal(missing) == "the certificate authority file \(missing) does not exist")
        #expect(refusal("ca.pem")?.contains("is not an absolute path") == true)
        #expect(refusal(folder.url.path)?.hasSuffix("is not a file") == true)

        let garbage = folder.file("garbage.pem")
        try Data("not a certificate\n-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8)
            .write(to: garbage)
        #expect(refusal(garbage.path)?.contains("\(garbage.path) holds no certificate") == true)

        let large = folder.file("large.pem")
        #expect(FileManager.default.createFile(atPath: large.path, contents: nil))
        #expect(truncate(large.path, off_t(CertificateAuthorityFile.largest + 1)) == 0)
        #expect(refusal(large.path)?.contains("larger than 16 MiB") == true)

        // The good file stays good: nothing above changed it.
        #expect(refusal(file.path) == nil)
    }

    /// Whoever can change the file (or the folder that holds it) could make sync trust any
    /// server: refused, saying how to fix it. A folder with the sticky bit (/tmp) lets no one
    /// else replace the user's file, so it serves.
    @Test func aFileOthersCanChangeIsRefused() throws {
        let folder = try TemporaryFolder()
        let file = try bundle(in: folder)
        chmod(file.path, 0o666)
        let writable = try #require(refusal(file.path))
        #expect(writable.contains("can be changed by other users through it (mode 666)"))
        #expect(writable.contains("chmod go-w"))
        chmod(file.path, 0o644)
        chmod(folder.url.path, 0o777)
        #expect(refusal(file.path)?.contains("through its folder (mode 777)") == true)
        chmod(folder.url.path, 0o1777)
        #expect(refusal(file.path) == nil)
        chmod(folder.url.path, 0o755)
        if getuid() == 0 {
            // Root's own test: a file of another user's.
            #expect(chown(file.path, 65534, 65534) == 0)
            #expect(refusal(file.path)?.contains("belongs to another user") == true)
        }
    }

    /// A file named for a folder remote, or for plain http, is a mistake said at once.
    @Test func aFileForARemoteThatIsNotHTTPSIsRefused() throws {
        let folder = try TemporaryFolder()
        let file = try bundle(in: folder)
        var options = RemoteOptions()
        options.stateHome = folder.url
        options.caFile = file
        let local = try TemporaryFolder()
        #expect {
            _ = try SyncRemotes.remote(for: "file://" + local.url.path, options: options)
        } throws: { error in
            (error as? RemoteSetupError)?.kind == .invalidAddress
                && (error as? RemoteSetupError)?.message.contains("is for https:// servers") == true
        }
        #expect {
            _ = try SyncRemotes.remote(for: "http://127.0.0.1:9/dav/", options: options)
        } throws: { error in
            (error as? RemoteSetupError)?.message.contains("is for https:// servers, and this one is http://")
                == true
        }
        var s3 = S3Remote.Configuration(
            bucket: "b", prefix: "p", endpoint: URL(string: "http://127.0.0.1:9"), region: "us-east-1",
            credentials: S3Credentials(accessKeyID: "k", secretAccessKey: "s"))
        s3.caFile = file.path
        #expect(throws: RemoteError.self) { _ = try S3Remote(s3) }
    }

    /// The file is kept with the remote's address, and comes back from it.
    @Test func theFileIsPartOfTheRemotesAddress() throws {
        let folder = try TemporaryFolder()
        var options = RemoteOptions()
        options.caFile = folder.file("ca.pem")
        let address = RemoteAddress(url: "https://nas.example/dav/", options: options)
        #expect(address.caFile == folder.file("ca.pem").path)
        let read = try #require(RemoteAddress(encoded: address.encoded))
        #expect(read == address)
        #expect(read.applied(to: RemoteOptions()).caFile?.path == folder.file("ca.pem").path)
        #expect(RemoteAddress(url: address.url).filled(from: address).caFile == address.caFile)
        #expect(SyncRemotes.settingsFiles(for: address).contains(folder.file("ca.pem")))
    }
}

extension BlockingSyncTests.WebDAVRemoteTests {
    /// The HTTPS server's certificate is signed by a throwaway authority: verified against it
    /// when the remote names its file, refused against the system's authorities and against
    /// another authority's file, each refusal naming what was trusted and what to do. Two
    /// remotes of one process, one with the file and one without, each keep their own trust.
    @Test func aPrivateAuthorityIsTrustedByTheRemoteThatNamesItAndNoOther() throws {
        let (trusting, url, _) = try WebDAVServers.collection(on: .tls)
        _ = try trusting.write(
            RemotePath("Note.txt"), from: UploadSource(Data("over TLS\n".utf8)), condition: .absent)

        func remote(caFile: String?) throws -> WebDAVRemote {
            var configuration = WebDAVRemote.Configuration(
                url: url, credentials: try WebDAVServers.credentials())
            configuration.timeout = 10
            configuration.caFile = caFile
            return try WebDAVRemote(configuration)
        }
        let system = try remote(caFile: nil)
        let other = try remote(caFile: try WebDAVServers.value("DOCUMENTSYNC_WEBDAV_OTHER_CA_FILE"))
        for _ in 0..<2 {
            // In either order, each remote keeps its own trust.
            #expect(try trusting.list(.root).entries.map(\.name) == ["Note.txt"])
            let refused = #expect(throws: RemoteError.self) { _ = try system.list(.root) }
            #expect(refused?.kind == .insecure)
            #expect(
                refused?.description.contains(
                    "for a private authority, give its certificate with --ca-file FILE") == true)
            let wrong = #expect(throws: RemoteError.self) {
                _ = try other.read(RemotePath("Note.txt")) { _ in }
            }
            #expect(wrong?.kind == .insecure)
            #expect(wrong?.description.contains("other-ca.pem (--ca-file)") == true)
        }
    }

    /// Through the factory, as `docs remote add … --ca-file` makes it: the probe and the sync
    /// reach the server; without the file the setup fails saying to give one.
    @Test func aRemoteMadeWithACAFileIsProbedAndSynced() throws {
        let state = try TemporaryFolder()
        let (_, url, _) = try WebDAVServers.collection(on: .tls)
        var options = try WebDAVServers.options(keepingSettingsIn: state)
        #expect {
            _ = try SyncRemotes.remote(for: url.absoluteString, options: options)
        } throws: { error in
            (error as? RemoteSetupError)?.message.contains("--ca-file FILE") == true
        }
        options.caFile = URL(fileURLWithPath: try WebDAVServers.value("DOCUMENTSYNC_WEBDAV_CA_FILE"))
        let remote = try SyncRemotes.remote(for: url.absoluteString, options: options)
        #expect(remote.address?.caFile == options.caFile?.path)
        let device = try SyncDevice("A", remote: remote, in: state)
        try device.write("Plan.txt", "kept private\n")
        #expect(try device.sync().failures.isEmpty)
        var data = Data()
        _ = try remote.read(RemotePath("Plan.txt")) { data.append($0) }
        #expect(data == Data("kept private\n".utf8))
    }
}

extension BlockingSyncTests.S3RemoteTests {
    /// An S3 store behind https with a private authority's certificate (a MinIO on a NAS):
    /// reached with the authority's file, refused without it, saying to give one.
    @Test func anS3EndpointOfAPrivateAuthorityIsReachedWithItsCAFile() throws {
        let caFile = try WebDAVServers.value("DOCUMENTSYNC_WEBDAV_CA_FILE")
        var configuration = try S3Servers.configuration(prefix: S3Servers.freshPrefix(#function))
        let relay = try TLSRelay(to: try #require(configuration.endpoint), caFile: caFile)
        configuration.endpoint = relay.url
        configuration.caFile = caFile
        let remote = try S3Remote(configuration)
        _ = try remote.write(
            RemotePath("Note.txt"), from: UploadSource(Data("over TLS\n".utf8)), condition: .absent)
        #expect(try remote.list(.root).entries.map(\.name).contains("Note.txt"))

        configuration.caFile = nil
        let untrusting = try S3Remote(configuration)
        let refused = #expect(throws: RemoteError.self) { _ = try untrusting.list(.root) }
        #expect(refused?.kind == .insecure)
        #expect(refused?.description.contains("give its certificate with --ca-file FILE") == true)
    }
}
