import DocumentKit
import DocumentSync
import Foundation
import TextContainer

/// `docs remote add|list|remove|test`: the ubiquity containers of ``UbiquityConfiguration``,
/// each a container folder synced with a remote under a name and an identifier.
@MainActor
enum RemoteCommand {
    static let usage =
        "the remote commands are “docs remote add NAME URL”, “docs remote list”, “docs remote remove NAME”, “docs remote test NAME|URL”, “docs remote passphrase NAME” and “docs remote check NAME”"

    static func run(_ invocation: Invocation) throws -> ExitStatus {
        let operands = invocation.operands
        guard let subcommand = operands.first else { throw DocsFailure.usage(usage, command: "remote") }
        let arguments = Array(operands.dropFirst())
        if subcommand != "add" {
            for (given, option) in [
                (invocation.identifier != nil, "--identifier"), (invocation.interval != nil, "--interval"),
                (invocation.endpoint != nil, "--endpoint"), (invocation.region != nil, "--region"),
                (invocation.profile != nil, "--profile"), (invocation.encrypt, "--encrypt"),
            ] where given {
                throw DocsFailure.usage("\(option) is for remote add", command: "remote")
            }
        }
        if invocation.repair && subcommand != "check" {
            throw DocsFailure.usage("--repair is for remote check", command: "remote")
        }
        if invocation.json && subcommand != "list" {
            throw DocsFailure.usage("--json is for remote list", command: "remote")
        }
        switch subcommand {
        case "add":
            try Docs.requireOperands(arguments, command: "remote add", names: ["NAME", "URL"])
            try add(name: arguments[0], url: arguments[1], invocation: invocation)
            return .success
        case "list":
            try Docs.requireOperands(arguments, command: "remote list", names: [])
            try list(json: invocation.json)
            return .success
        case "remove":
            try Docs.requireOperands(arguments, command: "remote remove", names: ["NAME"])
            try remove(name: arguments[0])
            return .success
        case "test":
            try Docs.requireOperands(arguments, command: "remote test", names: ["NAME|URL"])
            return try test(arguments[0], invocation: invocation)
        case "passphrase":
            try Docs.requireOperands(arguments, command: "remote passphrase", names: ["NAME"])
            try changePassphrase(name: arguments[0], invocation: invocation)
            return .success
        case "check":
            try Docs.requireOperands(arguments, command: "remote check", names: ["NAME"])
            return try check(name: arguments[0], invocation: invocation)
        default:
            throw DocsFailure.usage("unknown remote command “\(subcommand)”; \(usage)", command: "remote")
        }
    }

    /// The configured containers, or a failure naming the settings file.
    static func configuration() throws -> UbiquityConfiguration {
        do {
            return try UbiquityConfiguration.load()
        } catch let error as DocumentKitError {
            throw DocsFailure.failure(DocsFailure.reason(for: error))
        }
    }

    /// Checks a remote's name: letters, digits, “-”, “_” and “.”, starting with a letter or
    /// digit, at most 64 characters, so that it is one word on any command line.
    static func validatedName(_ name: String) throws -> String {
        let allowed = name.unicodeScalars.allSatisfy {
            ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0))
                && !$0.properties.isWhitespace
        }
        guard !name.isEmpty, name.count <= 64, allowed, let first = name.unicodeScalars.first,
            first.properties.isAlphabetic || ("0"..."9").contains(first)
        else {
            throw DocsFailure.usage(
                "“\(Output.escaped(name))” is not a remote name: use letters, digits, “-”, “_” and “.”, starting with a letter or digit",
                command: "remote")
        }
        return name
    }

    /// `docs remote add NAME URL`: checks that the remote can be used (a WebDAV server is
    /// probed), then records the container folder, the remote and the user name, never a
    /// password.
    static func add(name: String, url given: String, invocation: Invocation) throws {
        let name = try validatedName(name)
        let url = try s3URL(given, invocation)
        let container: TextContainer
        do {
            container = try TextContainer(path: invocation.containerPath)
        } catch let error as DocumentKitError {
            throw DocsFailure.failure("cannot use the container: \(DocsFailure.reason(for: error))")
        }
        guard URL(string: url)?.user == nil else {
            throw DocsFailure.usage(
                "give the user name with --user, not in the URL: the URL is shown in listings",
                command: "remote")
        }
        let options = SyncCommand.options(invocation)
        do {
            let remote = try SyncRemotes.remote(for: url, options: options)
            try SyncEngine.checkSeparate(container: container.url, remote: remote)
        } catch let error as RemoteSetupError {
            throw DocsFailure.of(error, command: "remote")
        } catch let error as SyncError where error.kind == .unusable {
            throw DocsFailure.usage(error.message, command: "remote")
        } catch let error as SyncError {
            throw DocsFailure.failure(error.message)
        }
        // Every setting given is kept, so that each later sync (and the agent) reaches this
        // remote as given; never the password, only the path of the file holding it.
        let entry = UbiquityContainer(
            name: name,
            identifier: invocation.identifier ?? UbiquityContainer.defaultIdentifier(forName: name),
            folder: container.url.path, remote: url, user: invocation.user,
            downloadsEagerly: !invocation.onDemand, pollSeconds: try Docs.pollSeconds(invocation),
            passwordFile: options.credentials.passwordFile?.standardizedFileURL.path,
            allowsUnsafeServer: options.allowsUnsafeServer, allowsInsecureHTTP: options.allowsInsecureHTTP,
            caFile: options.caFile?.path, encrypted: options.vault.encrypted,
            passphraseFile: options.vault.passphraseFile?.path)
        do {
            try UbiquityConfiguration.update { configuration in
                try configuration.add(entry)
                configuration.agent = agentPath() ?? configuration.agent
            }
        } catch let error as DocumentKitError {
            throw DocsFailure.failure(DocsFailure.reason(for: error))
        }
        let vault = entry.encrypted ? ", encrypted: the server keeps only ciphertext" : ""
        try Output.write(
            "\(name): \(Output.escaped(container.url.path)) syncs with \(url) (container \(entry.identifier))\(vault)\n"
        )
    }

    /// An `s3://` URL with `--endpoint`, `--region` and `--profile` folded into it, as the
    /// container's settings keep it; any other URL as given (those options are S3's).
    static func s3URL(_ url: String, _ invocation: Invocation, command: String = "remote") throws -> String {
        let options = [
            (invocation.endpoint, "--endpoint"), (invocation.region, "--region"),
            (invocation.profile, "--profile"),
        ]
        guard url.lowercased().hasPrefix("s3://") else {
            if let option = options.first(where: { $0.0 != nil })?.1 {
                throw DocsFailure.usage("\(option) is for s3:// remotes", command: command)
            }
            return url
        }
        var address: S3Address
        do { address = try S3Address(parsing: url) } catch let error as RemoteSetupError {
            throw DocsFailure.usage(error.message, command: command)
        }
        if let endpoint = invocation.endpoint {
            guard let parsed = URL(string: endpoint),
                ["http", "https"].contains(parsed.scheme?.lowercased()),
                parsed.host != nil
            else {
                throw DocsFailure.usage(
                    "--endpoint “\(Output.escaped(endpoint))” is not an http(s) URL", command: command)
            }
            address.endpoint = parsed
        }
        if let region = invocation.region { address.region = region }
        if let profile = invocation.profile { address.profile = profile }
        return address.url
    }

    /// This program's own path, for starting it as a container's sync agent.
    static func agentPath() -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    static func list(json: Bool) throws {
        let containers = try configuration().containers
        if json {
            var writer = JSONWriter()
            writer.raw("{\"remotes\":[")
            writer.objects(containers) { writer, container in
                writer.field("name", container.name)
                writer.field("identifier", container.identifier)
                writer.field("container", container.folder)
                writer.field("url", container.remote)
                writer.field("user", container.user)
                writer.field("passwordFile", container.passwordFile)
                writer.field("allowsUnsafeServer", container.allowsUnsafeServer)
                writer.field("allowsInsecureHTTP", container.allowsInsecureHTTP)
                writer.field("caFile", container.caFile)
                writer.field("encrypted", container.encrypted)
                writer.field("passphraseFile", container.passphraseFile)
                writer.field("downloadsEagerly", container.downloadsEagerly)
                writer.field("agentRunning", UbiquityAgent.isRunning(for: container.url))
            }
            writer.raw("}\n")
            try Output.write(writer.bytes)
        } else {
            var text = ""
            for container in containers {
                let user = container.user.map { " as \($0)" } ?? ""
                let agent = UbiquityAgent.isRunning(for: container.url) ? ", syncing" : ""
                let vault = container.encrypted ? ", encrypted" : ""
                text +=
                    "\(container.name)\t\(Output.escaped(container.folder))\t\(container.remote)\(user) (\(container.identifier)\(vault)\(agent))\n"
            }
            try Output.write(text)
        }
    }

    /// `docs remote remove NAME`: forgets the container's remote, and the vault's key kept for
    /// it (`--keep-key`), unless another container syncs with the same vault.
    static func remove(name: String) throws {
        let removed: UbiquityContainer?
        let stillUsed: Bool
        do {
            (removed, stillUsed) = try UbiquityConfiguration.update { configuration in
                let container = configuration.container(named: name)
                guard configuration.remove(named: name), let container else { return (nil, false) }
                return (container, configuration.containers.contains { $0.remote == container.remote })
            }
        } catch let error as DocumentKitError {
            throw DocsFailure.failure(DocsFailure.reason(for: error))
        }
        guard let removed else {
            throw DocsFailure.failure(
                "there is no remote named “\(Output.escaped(name))” (see docs remote list)")
        }
        if removed.encrypted && !stillUsed {
            do { try VaultKeyFile.remove(for: removed.remote) } catch {
                throw DocsFailure.failure(
                    "\(name) was removed, and its vault's kept key could not be: \(error); remove \(VaultKeyFile.url(for: removed.remote).path) yourself"
                )
            }
        }
        try Output.write("\(name): removed; the container's documents stay where they are\n")
    }

    /// `docs remote passphrase NAME`: wraps the vault's master keys under a new passphrase
    /// (nothing is encrypted again), written only over the key file read, so that a change made
    /// meanwhile elsewhere is never overwritten. The current passphrase comes from
    /// `--passphrase-file`, `DOCS_PASSPHRASE` or the terminal; the new one from
    /// `--new-passphrase-file`, `DOCS_NEW_PASSPHRASE` or the terminal (twice).
    static func changePassphrase(name: String, invocation: Invocation) throws {
        let container = try encryptedContainer(
            named: name, plain: "it has no passphrase (add it with --encrypt to make a vault)")
        let given = SyncCommand.options(invocation)
        var options = RemoteAddress(url: container.remote, options: given)
            .filled(from: SyncCommand.address(of: container)).applied(to: given)
        var current = options.vault
        current.encrypted = true
        var new = current
        new.passphraseFile = invocation.newPassphraseFile.map { URL(fileURLWithPath: $0).standardizedFileURL }
        new.environment["DOCS_PASSPHRASE"] = current.environment["DOCS_NEW_PASSPHRASE"]
        options.vault = VaultKeySources()
        do {
            try SyncRemotes.changePassphrase(
                ofVaultAt: container.remote, options: options, current: current, new: new)
        } catch let error as RemoteSetupError {
            throw DocsFailure.of(error, command: "remote")
        }
        try Output.write(
            "\(name): the passphrase of the vault at \(container.remote) changed; no document was encrypted again\n"
        )
    }

    /// `docs remote test NAME|URL`: probes a WebDAV server and says in words what it is.
    static func test(_ nameOrURL: String, invocation: Invocation) throws -> ExitStatus {
        var options = SyncCommand.options(invocation)
        var url = nameOrURL
        if !nameOrURL.contains("://") {
            guard let container = try configuration().container(named: nameOrURL) else {
                throw DocsFailure.failure(
                    "there is no remote named “\(Output.escaped(nameOrURL))” (see docs remote list)")
            }
            url = container.remote
            let given = RemoteAddress(url: url, options: options)
            options = given.filled(from: SyncCommand.address(of: container)).applied(to: options)
        }
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased() else {
            throw DocsFailure.usage("“\(url)” is not a URL", command: "remote")
        }
        if scheme == "file" {
            do {
                _ = try SyncRemotes.remote(for: url, options: options)
            } catch let error as RemoteSetupError {
                throw DocsFailure.of(error, command: "remote")
            }
            try Output.write(
                "\(url): a folder: safe: every write is checked and made under the folder's lock\n")
            return .success
        }
        if scheme == "s3" {
            let found: (remote: S3Remote, probe: S3Probe)
            do {
                options.probesAgain = true
                found = try SyncRemotes.probeS3(url, options: options)
            } catch let error as RemoteSetupError {
                throw DocsFailure.of(error, command: "remote")
            }
            try Output.write("\(found.remote.displayName): \(found.probe.summary)\n")
            return found.probe.refusal == nil ? .success : .failure
        }
        guard ["http", "https"].contains(scheme) else {
            throw DocsFailure.usage(
                "“\(url)” is not a WebDAV URL (http:// or https://) nor s3://", command: "remote")
        }
        let probe: WebDAVProbe
        do {
            probe = try SyncRemotes.probe(url, options: options)
        } catch let error as RemoteSetupError {
            throw DocsFailure.of(error, command: "remote")
        }
        try Output.write("\(url): \(probe.summary)\n")
        return probe.writeProtocol == nil ? .failure : .success
    }

    /// The encrypted remote named `name`; a remote that is not encrypted is a failure saying
    /// `plain`.
    private static func encryptedContainer(named name: String, plain: String) throws -> UbiquityContainer {
        guard let container = try configuration().container(named: name) else {
            throw DocsFailure.failure(
                "there is no remote named “\(Output.escaped(name))” (see docs remote list)")
        }
        guard container.encrypted else {
            throw DocsFailure.failure("\(name) (\(container.remote)) is not encrypted: \(plain)")
        }
        return container
    }

    /// How long `remote check --repair` waits after its check before it looks again and
    /// removes: a folder another device is making has its directory a moment before its
    /// `dir.c9r`.
    static let repairSettle = Duration.seconds(30)

    /// `docs remote check NAME [--repair]`: the vault's health check (``EncryptedRemote``'s
    /// `checkHealth`), a line a problem; with `--repair`, the leftovers removed. Exit status 0
    /// when the vault is healthy (after the repair), 1 when problems remain.
    static func check(name: String, invocation: Invocation) throws -> ExitStatus {
        let container = try encryptedContainer(named: name, plain: "there is no vault to check")
        let given = SyncCommand.options(invocation)
        let options = RemoteAddress(url: container.remote, options: given)
            .filled(from: SyncCommand.address(of: container)).applied(to: given)
        let vault: EncryptedRemote
        do {
            guard
                let opened = try SyncRemotes.remote(for: container.remote, options: options)
                    as? EncryptedRemote
            else { throw DocsFailure.failure("\(name) (\(container.remote)) did not open as a vault") }
            vault = opened
        } catch let error as RemoteSetupError {
            throw DocsFailure.of(error, command: "remote")
        }
        do {
            var report = try vault.checkHealth()
            for line in report.lines { try Output.write(line + "\n") }
            if invocation.repair, !report.leftovers.isEmpty {
                try Output.write(
                    "\(name): waiting \(repairSettle.components.seconds) seconds for a folder another device may be making, then looking again\n"
                )
                for path in try vault.repairHealth(report, settle: repairSettle) {
                    try Output.write("removed: \(path)\n")
                }
                report = try vault.checkHealth()
            }
            try Output.write("\(name): \(summary(of: report, name: name, repaired: invocation.repair))\n")
            return report.isHealthy ? .success : .failure
        } catch let error as RemoteError {
            throw DocsFailure.failure(
                "\(name): the check of the vault at \(container.remote) stopped: \(error)")
        } catch let error as VaultError {
            throw DocsFailure.failure(
                "\(name): the check of the vault at \(container.remote) stopped: \(error)")
        }
    }

    /// The counts of `report` in words.
    private static func summary(of report: VaultHealthReport, name: String, repaired: Bool) -> String {
        let reached = "\(report.reachedCount) directories reached"
        guard !report.isHealthy else { return "healthy (\(reached))" }
        let leftovers = report.leftovers.count
        let counts = [
            (leftovers, "leftover", "leftovers"),
            (
                report.unreachable.count - leftovers, "unreachable directory kept",
                "unreachable directories kept"
            ),
            (report.damaged.count, "folder not followed", "folders not followed"),
        ].filter { $0.0 > 0 }.map { "\($0.0) \($0.0 == 1 ? $0.1 : $0.2)" }
        var text = "problems: " + counts.joined(separator: ", ") + " (\(reached))"
        if leftovers > 0, !repaired { text += "; docs remote check \(name) --repair removes the leftovers" }
        return text
    }
}
