import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

/// Share links (`Remote.publishedLink(of:lifetime:)`, behind
/// `FileManager.url(forPublishingUbiquitousItemAt:expiration:)`) on the remotes that have none,
/// and on Nextcloud's and ownCloud's sharing API. S3's presigned links are tested against
/// SeaweedFS in ``BlockingSyncTests/S3RemoteTests``.
@Suite struct ShareLinkTests {
    @Test func aFolderRemoteHasNoShareLinksAndSaysWhy() throws {
        let folder = try TemporaryFolder()
        let remote = LocalFolderRemote(root: try folder.folder("remote"))
        try remote.write(RemotePath("Plan.txt"), from: UploadSource(Data("plan".utf8)), condition: .absent)
        let failure = try #require(
            #expect(throws: RemoteError.self) {
                try remote.publishedLink(of: RemotePath("Plan.txt"), lifetime: .seconds(60))
            })
        #expect(failure.kind == .unsupported)
        #expect(failure.operation == .publish)
        #expect(failure.description.contains("Could not make a share link of “Plan.txt”"), "\(failure)")
        #expect(failure.description.contains("a folder remote (file://)"), "\(failure)")
    }

    @Test func theSharingAPIIsFoundOnlyWhereNextcloudAndOwnCloudServeFiles() throws {
        func api(_ url: String) -> WebDAVRemote.SharingAPI? {
            let base = URL(string: url)!
            let segments = base.path.split(separator: "/").map {
                String($0).removingPercentEncoding ?? String($0)
            }
            return WebDAVRemote.SharingAPI(base: base, segments: segments)
        }
        let nextcloud = try #require(api("https://cloud.example.com/remote.php/dav/files/ana/Notes%20A/"))
        #expect(
            nextcloud.shares.absoluteString
                == "https://cloud.example.com/ocs/v2.php/apps/files_sharing/api/v1/shares")
        #expect(nextcloud.folder == "Notes A")
        let owncloud = try #require(api("https://example.com:8443/owncloud/remote.php/webdav/"))
        #expect(
            owncloud.shares.absoluteString
                == "https://example.com:8443/owncloud/ocs/v2.php/apps/files_sharing/api/v1/shares")
        #expect(owncloud.folder == "")
        #expect(api("https://dav.example.com/notes/") == nil)
        #expect(api("https://cloud.example.com/remote.php/dav/calendars/ana/") == nil)
    }

    /// Apache's mod_dav: plain WebDAV, no sharing API; nothing is sent.
    @Test func aPlainWebDAVServerHasNoShareLinksAndSaysWhy() throws {
        let (remote, _, _) = try WebDAVServers.collection(on: .default)
        try remote.write(RemotePath("Plan.txt"), from: UploadSource(Data("plan".utf8)), condition: .absent)
        let failure = try #require(
            #expect(throws: RemoteError.self) {
                try remote.publishedLink(of: RemotePath("Plan.txt"), lifetime: .seconds(60))
            })
        #expect(failure.kind == .unsupported)
        #expect(
            failure.description.contains("is a WebDAV server, and WebDAV has no share links"), "\(failure)")
        #expect(failure.description.contains("Nextcloud and ownCloud"), "\(failure)")
    }

    /// A server answering as Nextcloud's sharing API documents it (OCS v2, JSON): the share is
    /// asked for as a public link (type 3), read only, with its expiry date, the path from the
    /// user's root, the API's header and the user's credentials; its link is what comes back.
    @Test func aNextcloudShareIsAPublicLinkWithItsExpiryDate() throws {
        let server = try HostileServer { request in
            guard request.method == "POST", request.path == "/nc/ocs/v2.php/apps/files_sharing/api/v1/shares"
            else { return .init(status: 404) }
            let body = """
                {"ocs":{"meta":{"status":"ok","statuscode":200,"message":"OK"},
                "data":{"id":"7","share_type":3,"url":"https://cloud.example.com/s/AbCdEf123",
                "expiration":"2026-12-13 00:00:00","path":"/Notes/Plan.txt"}}}
                """
            return .init(status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        }
        let remote = try WebDAVRemote(
            .init(
                url: server.url("/nc/remote.php/dav/files/ana/Notes/"),
                credentials: .init(user: "ana", password: "app-password"), writeProtocol: .conditional))
        let link = try remote.publishedLink(of: RemotePath("Plan.txt"), lifetime: .seconds(3 * 86_400))
        #expect(link.url.absoluteString == "https://cloud.example.com/s/AbCdEf123")
        let expires = try #require(link.expires)
        #expect(abs(expires.timeIntervalSinceNow - 3 * 86_400) < 60)
        let request = try #require(server.requests.last)
        #expect(request.headers["ocs-apirequest"] == "true")
        #expect(request.headers["authorization"]?.hasPrefix("Basic ") == true)
        let form =
            URLComponents(string: "?" + String(decoding: request.body, as: UTF8.self))?.queryItems ?? []
        let fields = Dictionary(form.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        #expect(fields["path"] == "/Notes/Plan.txt")
        #expect(fields["shareType"] == "3")
        #expect(fields["permissions"] == "1")
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.timeZone = TimeZone(identifier: "UTC")
        day.dateFormat = "yyyy-MM-dd"
        #expect(fields["expireDate"] == day.string(from: expires))
    }

    /// The API's own refusal is passed on, printable and short; sharing turned off is a
    /// remote without share links.
    @Test func aRefusedShareSaysWhatTheServerSaid() throws {
        let server = try HostileServer { request in
            let body = """
                {"ocs":{"meta":{"status":"failure","statuscode":404,"message":"Public link sharing is disabled by the administrator\\u0007"},"data":[]}}
                """
            return .init(status: 404, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        }
        let remote = try WebDAVRemote(
            .init(
                url: server.url("/remote.php/webdav/"),
                credentials: .init(user: "ana", password: "secret-pw"),
                writeProtocol: .conditional))
        let failure = try #require(
            #expect(throws: RemoteError.self) {
                try remote.publishedLink(of: RemotePath("Plan.txt"), lifetime: .seconds(60))
            })
        #expect(failure.kind == .unsupported)
        #expect(
            failure.description.contains(
                "refused it (404): Public link sharing is disabled by the administrator)"), "\(failure)")
        #expect(!failure.description.contains("\u{7}") && !failure.description.contains("secret-pw"))
    }
}
