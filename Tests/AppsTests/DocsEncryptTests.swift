import Foundation
import Testing

/// `docs remote add --encrypt`, `docs sync --encrypt` and `docs remote passphrase`: the real
/// `docs` in child processes, over a folder remote holding a Cryptomator vault. The passphrase
/// reaches `docs` through the environment, a file or a terminal, never its arguments.
@Suite("docs: encrypted remotes", .serialized)
struct DocsEncryptTests {
    let remoteRoot: URL
    let passphrase = "correct horse battery"

    init() throws {
        remoteRoot = FileManager.default.temporaryDirectory
            .appendingPathComponent("docs-vault-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: remoteRoot, withIntermediateDirectories: true)
    }

    var remoteURL: String { "file://" + remoteRoot.path }

    func docs(
        _ folder: DocsFolder, _ arguments: [String], passphrase: String? = nil, _ more: [String: String] = [:]
    )
        throws -> DocsResult
    {
        var environment = ["XDG_STATE_HOME": folder.root.appendingPathComponent("state").path]
        environment["DOCS_PASSPHRASE"] = passphrase ?? ""
        return try folder.run(arguments, environment: environment.merging(more) { $1 })
    }

    /// Every file under `root` (hidden ones too) by relative path, with its bytes.
    func snapshot(_ root: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(
            at: root, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            files[String(url.path.dropFirst(root.path.count))] = try Data(contentsOf: url)
        }
        return files
    }

    /// Whether any file under `root` holds `text`'s bytes.
    func anyFile(under root: URL, holds text: String) throws -> Bool {
        try snapshot(root).values.contains { $0.range(of: Data(text.utf8)) != nil }
    }

    @Test func theServerKeepsOnlyCiphertextAndASecondDeviceReadsTheDocuments() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let first = try DocsFolder()
        let added = try docs(
            first, ["remote", "add", "vault", remoteURL, "--encrypt"], passphrase: passphrase)
        #expect(added.status == 0, "\(added.error)")
        #expect(added.output.contains("encrypted"), "\(added.output)")
        try first.write("Zanzibar plans.txt", "the meeting moves to quokka hall\n")
        let synced = try docs(first, ["sync"], passphrase: passphrase)
        #expect(synced.status == 0, "\(synced.error)")
        #expect(synced.output.contains("1 uploaded"), "\(synced.output)")

        // A vault: its two files at the root, and nowhere a name or a word of the document.
        let stored = try snapshot(remoteRoot)
        #expect(stored["/vault.cryptomator"] != nil && stored["/masterkey.cryptomator"] != nil)
        for secret in ["Zanzibar", "quokka", passphrase] {
            #expect(try !anyFile(under: remoteRoot, holds: secret), "\(secret) is on the server")
            #expect(!stored.keys.contains { $0.contains(secret) }, "\(secret) names a file on the server")
        }
        // Nor is the passphrase kept anywhere on this device: settings, journal, versions.
        #expect(try !anyFile(under: first.root, holds: passphrase))
        let listing = try docs(first, ["remote", "list", "--json"])
        #expect(listing.output.contains("\"encrypted\":true"), "\(listing.output)")

        // Another device opens the same vault with the passphrase and reads the document.
        let second = try DocsFolder()
        let joined = try docs(
            second, ["remote", "add", "vault", remoteURL, "--encrypt"], passphrase: passphrase)
        #expect(joined.status == 0, "\(joined.error)")
        let down = try docs(second, ["sync"], passphrase: passphrase)
        #expect(down.status == 0, "\(down.error)")
        #expect(try second.contents("Zanzibar plans.txt") == "the meeting moves to quokka hall\n")

        // Its edit comes back to the first device through the vault.
        try second.write("Zanzibar plans.txt", "the meeting moves to quokka hall\nat noon\n")
        #expect(try docs(second, ["sync"], passphrase: passphrase).status == 0)
        #expect(try docs(first, ["sync"], passphrase: passphrase).status == 0)
        #expect(try first.contents("Zanzibar plans.txt") == "the meeting moves to quokka hall\nat noon\n")
    }

    @Test func aWrongOrRefusedPassphraseNamesTheVaultAndChangesNothing() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let device = try DocsFolder()
        // On the command line: refused before anything is read.
        let argv = try docs(device, ["remote", "add", "vault", remoteURL, "--encrypt", "--passphrase", "x"])
        #expect(argv.status == 2)
        #expect(argv.error.contains("DOCS_PASSPHRASE"), "\(argv.error)")
        // Too short for a new vault, and in a file others can read: nothing is made.
        let short = try docs(
            device, ["remote", "add", "vault", remoteURL, "--encrypt"], passphrase: "seven77")
        #expect(short.status == 1)
        #expect(short.error.contains("8 characters"), "\(short.error)")
        let file = device.root.appendingPathComponent("passphrase")
        try Data((passphrase + "\n").utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        let open = try docs(
            device, ["remote", "add", "vault", remoteURL, "--encrypt", "--passphrase-file", file.path])
        #expect(open.status == 1)
        #expect(open.error.contains(file.path) && open.error.contains("chmod 600"), "\(open.error)")
        #expect(try snapshot(remoteRoot).isEmpty)

        // Made with the file (made private), then opened with a wrong passphrase.
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let added = try docs(
            device, ["remote", "add", "vault", remoteURL, "--encrypt", "--passphrase-file", file.path])
        #expect(added.status == 0, "\(added.error)")
        try device.write("note.txt", "kept\n")
        #expect(try docs(device, ["sync"]).status == 0)
        let vault = try snapshot(remoteRoot)
        let other = try DocsFolder()
        try other.write("mine.txt", "typed here\n")
        let wrong = try docs(
            other, ["sync", "--remote", remoteURL, "--encrypt"], passphrase: "not the passphrase")
        #expect(wrong.status == 1)
        #expect(wrong.error.contains(remoteURL) && wrong.error.contains("wrong passphrase"), "\(wrong.error)")
        #expect(!wrong.error.contains("not the passphrase"))
        #expect(try snapshot(remoteRoot) == vault)
        #expect(try other.contents("mine.txt") == "typed here\n")
        #expect(!other.exists("note.txt"))
    }

    @Test func aVaultIsNeverSyncedAsPlainFiles() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let device = try DocsFolder()
        try device.write("a.txt", "a\n")
        #expect(
            try docs(device, ["sync", "--remote", remoteURL, "--encrypt"], passphrase: passphrase).status == 0
        )
        let vault = try snapshot(remoteRoot)
        let other = try DocsFolder()
        let plain = try docs(other, ["sync", "--remote", remoteURL])
        #expect(plain.status == 1)
        #expect(plain.error.contains("--encrypt"), "\(plain.error)")
        #expect(try snapshot(other.container).isEmpty)
        #expect(try snapshot(remoteRoot) == vault)
        // And a remote synced encrypted once stays so, without --encrypt given again.
        try device.write("b.txt", "b\n")
        let again = try docs(device, ["sync", "--remote", remoteURL], passphrase: passphrase)
        #expect(again.status == 0, "\(again.error)")
        #expect(again.output.contains("1 uploaded"), "\(again.output)")
    }

    @Test func aKeptKeySyncsWithoutThePassphraseAndGoesWithTheRemote() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let device = try DocsFolder()
        let added = try docs(
            device, ["remote", "add", "vault", remoteURL, "--encrypt", "--keep-key"], passphrase: passphrase)
        #expect(added.status == 0, "\(added.error)")
        let keys = device.root.appendingPathComponent("state/DocumentKit/vault-keys")
        let files = try FileManager.default.contentsOfDirectory(atPath: keys.path)
        #expect(files.count == 1)
        let key = keys.appendingPathComponent(files[0])
        let attributes = try FileManager.default.attributesOfItem(atPath: key.path)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        #expect(attributes[.size] as? Int == 64)
        // No passphrase anywhere now: the key opens the vault (as the agent, with no terminal).
        try device.write("a.txt", "a\n")
        let synced = try docs(device, ["sync"])
        #expect(synced.status == 0, "\(synced.error)")
        // A key file others can read is refused, naming it.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key.path)
        let exposed = try docs(device, ["sync"])
        #expect(exposed.status == 1)
        #expect(exposed.error.contains(key.path), "\(exposed.error)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key.path)
        #expect(try docs(device, ["remote", "remove", "vault"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: key.path))
    }

    @Test func changingThePassphraseRewrapsTheKeysAndNothingElse() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let device = try DocsFolder()
        #expect(
            try docs(device, ["remote", "add", "vault", remoteURL, "--encrypt"], passphrase: passphrase)
                .status == 0)
        try device.write("a.txt", "a\n")
        #expect(try docs(device, ["sync"], passphrase: passphrase).status == 0)
        let before = try snapshot(remoteRoot)
        let next = "a new and longer passphrase"
        let refused = try docs(
            device, ["remote", "passphrase", "vault"], passphrase: "wrong passphrase",
            ["DOCS_NEW_PASSPHRASE": next])
        #expect(refused.status == 1)
        #expect(refused.error.contains("wrong passphrase"), "\(refused.error)")
        #expect(try snapshot(remoteRoot) == before)
        let changed = try docs(
            device, ["remote", "passphrase", "vault"], passphrase: passphrase, ["DOCS_NEW_PASSPHRASE": next])
        #expect(changed.status == 0, "\(changed.error)")
        let after = try snapshot(remoteRoot)
        #expect(after["/masterkey.cryptomator"] != before["/masterkey.cryptomator"])
        #expect(
            after.filter { $0.key != "/masterkey.cryptomator" }
                == before.filter { $0.key != "/masterkey.cryptomator" })
        let old = try docs(device, ["sync"], passphrase: passphrase)
        #expect(old.status == 1)
        #expect(old.error.contains("wrong passphrase"), "\(old.error)")
        #expect(try docs(device, ["sync"], passphrase: next).status == 0)
    }

    @Test func thePassphraseIsAskedAtTheTerminalAndAMistypeMayBeTypedAgain() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let device = try DocsFolder()
        try device.write("a.txt", "a\n")
        #expect(
            try docs(device, ["sync", "--remote", remoteURL, "--encrypt"], passphrase: passphrase).status == 0
        )
        // `docs sync` on a terminal of its own (python's pty), what it prints and what is typed:
        // a wrong passphrase, then the right one. Nothing typed may be echoed.
        let other = try DocsFolder()
        let driver = other.root.appendingPathComponent("terminal.py")
        let answers = ["a mistyped one", passphrase].map { "b'\($0)\\n'" }.joined(separator: ", ")
        try Data(
            """
            import os, pty, select, sys, time
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            out = b''
            def read_until(marker, times=1, seconds=120):
                global out
                end = time.time() + seconds
                while out.count(marker) < times and time.time() < end:
                    ready, _, _ = select.select([fd], [], [], 0.1)
                    if ready:
                        try: out += os.read(fd, 4096)
                        except OSError: return
            for index, answer in enumerate([\(answers)]):
                read_until(b'Passphrase of the vault', index + 1)
                os.write(fd, answer)
            read_until(b'sync:')
            for _ in range(600):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done: break
                time.sleep(0.1)
            else:
                os.kill(pid, 9)
                _, status = os.waitpid(pid, 0)
            sys.stdout.write(out.decode('utf-8', 'replace'))
            sys.exit(os.waitstatus_to_exitcode(status))
            """.utf8
        ).write(to: driver)
        var environment = other.environment
        environment["XDG_STATE_HOME"] = other.root.appendingPathComponent("state").path
        environment["DOCS_PASSPHRASE"] = nil
        let result = try runDocs(
            URL(fileURLWithPath: "/usr/bin/python3"),
            [driver.path, DocsBinary.url.path, "sync", "--remote", remoteURL, "--encrypt"],
            environment: environment,
            input: nil, scratch: other.root, timeout: .seconds(300))
        #expect(result.status == 0, "\(result.output) \(result.error)")
        #expect(result.output.contains("That passphrase does not open it."), "\(result.output)")
        #expect(
            !result.output.contains("mistyped") && !result.output.contains(passphrase), "\(result.output)")
        #expect(try other.contents("a.txt") == "a\n")
    }

    @Test func theHealthCheckFindsALeftoverAndTheRepairRemovesIt() throws {
        defer { try? FileManager.default.removeItem(at: remoteRoot) }
        let device = try DocsFolder()
        #expect(
            try docs(device, ["remote", "add", "vault", remoteURL, "--encrypt"], passphrase: passphrase)
                .status
                == 0)
        try device.write("note.txt", "kept\n")
        #expect(try docs(device, ["sync"], passphrase: passphrase).status == 0)
        let healthy = try docs(device, ["remote", "check", "vault"], passphrase: passphrase)
        #expect(healthy.status == 0 && healthy.output.contains("vault: healthy"), "\(healthy.output)")

        // What a folder's making stopped on another device leaves: a directory no folder reaches.
        let name = "AA/" + String(repeating: "Q", count: 30)
        let leftover = remoteRoot.appendingPathComponent("d/" + name)
        try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: true)
        let found = try docs(device, ["remote", "check", "vault"], passphrase: passphrase)
        #expect(found.status == 1, "\(found.error)")
        #expect(found.output.contains("leftover: d/\(name) "), "\(found.output)")
        #expect(found.output.contains("problems: 1 leftover"), "\(found.output)")
        #expect(FileManager.default.fileExists(atPath: leftover.path))
        // Refused where it means nothing; asked without the passphrase, a clear error.
        #expect(try docs(device, ["remote", "list", "--repair"]).status == 2)
        let locked = try docs(device, ["remote", "check", "vault"])
        #expect(locked.status == 1 && locked.error.contains("passphrase"), "\(locked.error)")

        let repaired = try docs(device, ["remote", "check", "vault", "--repair"], passphrase: passphrase)
        #expect(repaired.status == 0, "\(repaired.output) \(repaired.error)")
        #expect(repaired.output.contains("removed: d/\(name)"), "\(repaired.output)")
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
        #expect(try docs(device, ["remote", "check", "vault"], passphrase: passphrase).status == 0)
        let other = try DocsFolder()
        #expect(
            try docs(other, ["remote", "add", "vault", remoteURL, "--encrypt"], passphrase: passphrase).status
                == 0)
        #expect(try docs(other, ["sync"], passphrase: passphrase).status == 0)
        #expect(try other.contents("note.txt") == "kept\n")
    }
}
