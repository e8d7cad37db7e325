import DocumentKit
import Foundation
import Testing

@testable import DocumentSync

extension BlockingSyncTests.WebDAVRemoteTests {
    /// A server that gives no ETags (Apache with `FileETag None`, as nginx's dav-ext module) is
    /// refused, with `--unsafe-server` too, and the refusal says what to use instead, never
    /// `--unsafe-server`: with it, every upload was reported failed though written, a device
    /// that never edited a file got a conflict, and each file was downloaded on every pass.
    @Test func aServerWithoutETagsIsRefusedEvenWhenUnsafeServersAreAllowed() throws {
        let state = try TemporaryFolder()
        let root = try #require(URL(string: try WebDAVServers.value("DOCUMENTSYNC_WEBDAV_NOETAG")))
        var setup = WebDAVRemote.Configuration(url: root, credentials: try WebDAVServers.credentials())
        setup.timeout = 10
        let leaf = "t-noetag-\(UUID().uuidString.prefix(8))"
        try WebDAVRemote(setup).makeFolder(RemotePath(leaf))
        let url = root.appendingPathComponent(leaf, isDirectory: true).absoluteString

        var options = try WebDAVServers.options(keepingSettingsIn: state)
        options.allowsUnsafeServer = true
        #expect {
            _ = try SyncRemotes.remote(for: url, options: options)
        } throws: { error in
            guard let error = error as? RemoteSetupError else { return false }
            return error.kind == .refused && error.message.contains("gives no ETags")
                && error.message.contains("--unsafe-server does not help")
                && !error.message.contains("or --unsafe-server to sync")
        }
        var probe = WebDAVProbe()
        probe.hasETags = false
        #expect(!probe.canSyncUnsafely && probe.writeProtocol == nil)
        // A server that has ETags but fails a check is still offered --unsafe-server.
        probe.hasETags = true
        probe.etagsChangeWithinASecond = true
        #expect(probe.canSyncUnsafely && probe.refusal?.contains("or --unsafe-server to sync") == true)
    }
}
