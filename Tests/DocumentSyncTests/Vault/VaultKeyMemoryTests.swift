import Foundation
import Testing

@testable import DocumentSync

#if canImport(Glibc)
    import Glibc
#endif

/// Where a vault's keys live: locked pages, and an address that remembers a vault but never
/// its passphrase.
struct VaultKeyMemoryTests {
    @Test func keysAreLockedInMemoryWhereTheLimitAllows() throws {
        var limit = rlimit()
        #expect(getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit) == 0)
        let key = try SecretBytes.random(count: 64)
        // Debian gives every user 8 MiB of locked memory (root: no limit, all ones); a few keys fit.
        if limit.rlim_cur >= 64 << 10 {
            #expect(key.isLocked)
        }
        // Locked or not, the bytes are the key's.
        #expect(key.withUnsafeBytes { $0.count } == 64)
    }

    /// Locks do not nest: a secret that shared a page with another would unlock it on release.
    @Test func noTwoSecretsShareAPage() throws {
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        let secrets = try (0..<16).map { _ in try SecretBytes.random(count: 32) }
        for secret in secrets {
            #expect(secret.pages.lowerBound % page == 0 && secret.pages.count % Int(page) == 0)
        }
        for (index, secret) in secrets.enumerated() {
            for other in secrets[(index + 1)...] { #expect(!secret.pages.overlaps(other.pages)) }
        }
    }

    /// A vault kept in a folder inside the container would sync the container into itself.
    @Test func aVaultInsideTheContainerIsRefused() throws {
        let folder = try TemporaryFolder()
        let container = try folder.folder("Container")
        let inside = try folder.folder("Container/vault")
        let vault = try EncryptedRemote.create(
            over: LocalFolderRemote(root: inside), passphrase: VaultPassphrase("correct horse"),
            cost: EncryptedRemoteTests.cheap)
        #expect(throws: SyncError.self) { try SyncEngine.checkSeparate(container: container, remote: vault) }
    }

    @Test func anAddressRemembersAVaultAndItsPassphraseFileNeverThePassphrase() throws {
        var given = RemoteAddress(url: "file:///srv/notes")
        given.encrypted = true
        given.passphraseFile = "/home/ana/.config/notes-passphrase"
        let encoded = try JSONEncoder().encode(given)
        let decoded = try JSONDecoder().decode(RemoteAddress.self, from: encoded)
        #expect(decoded == given)
        // A later sync that names the URL alone still reaches the vault, with the same file.
        let later = RemoteAddress(url: "file:///srv/notes").filled(from: decoded)
        #expect(later.encrypted && later.passphraseFile == given.passphraseFile)
        // An address an older version wrote is a plain remote.
        let old = try JSONDecoder().decode(
            RemoteAddress.self, from: Data(#"{"url":"file:///srv/notes"}"#.utf8))
        #expect(!old.encrypted && old.passphraseFile == nil)
    }
}
