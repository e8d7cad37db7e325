import DocumentKit
import Foundation
import TextContainer

/// The `docs` tool: parses the command line, runs one subcommand, and turns its outcome
/// into output and an exit status.
@MainActor
enum Docs {
    static let version = "0.1.0"

    static let commands = [
        "list", "new", "show", "edit", "rename", "delete", "versions", "restore", "resolve", "watch", "sync",
        "status", "remote", "evict", "download", "share",
    ]

    /// Runs the tool with the arguments after the program name and returns the exit status.
    static func run(_ arguments: [String]) async -> Int32 {
        let invocation: Invocation
        do {
            invocation = try Invocation(parsing: arguments)
            return try await run(invocation).rawValue
        } catch var failure as DocsFailure {
            if failure.command == nil, let command = try? Invocation(parsing: arguments).command {
                failure.command = command
            }
            report(failure)
            return failure.status.rawValue
        } catch {
            Output.error("docs: \(error)")
            return ExitStatus.failure.rawValue
        }
    }

    static func report(_ failure: DocsFailure) {
        Output.error("docs: \(failure.message)")
        if failure.status == .usage {
            let command = failure.command.flatMap { commands.contains($0) ? $0 : nil }
            Output.error(command.map { "Try “docs \($0) --help”." } ?? "Try “docs --help”.")
        }
    }

    static func run(_ invocation: Invocation) async throws -> ExitStatus {
        if invocation.version {
            try Output.write(
                """
                docs \(version) (DocumentKit \(documentKitVersion))
                watch: \(QueryAdapter.sourceDescription)

                """)
            return .success
        }
        guard var command = invocation.command else {
            if invocation.help {
                try Output.write(Help.tool)
                return .success
            }
            throw DocsFailure.usage("no command given", command: nil)
        }
        var invocation = invocation
        if command == "help" {
            // `docs help` and `docs help COMMAND` read as `--help`.
            guard let topic = invocation.operands.first else {
                try Output.write(Help.tool)
                return .success
            }
            command = topic
            invocation.command = topic
            invocation.operands.removeFirst()
            invocation.help = true
        }
        guard commands.contains(command) else {
            throw DocsFailure.usage("unknown command “\(command)”", command: nil)
        }
        if invocation.help {
            try Output.write(Help.text(for: command))
            return .success
        }
        try checkOptions(invocation, command: command)
        if command == "remote" { return try RemoteCommand.run(invocation) }
        let container: TextContainer
        do {
            // A folder named by --container or $STE_CONTAINER must be there: a typo would
            // otherwise become a new folder, and a sync would fill it with the whole remote.
            // The default folder is made on first use, as ste makes it.
            let named =
                TextContainer.namedPath(
                    invocation.containerPath, environment: ProcessInfo.processInfo.environment) != nil
            container = try TextContainer(path: invocation.containerPath, creating: !named)
            guard FileStatus(path: container.url.path) != nil else {
                throw DocsFailure.failure(
                    "cannot use the container “\(container.url.path)”: there is no such folder (make it first with mkdir -p, or leave out --container and $STE_CONTAINER for the default one)"
                )
            }
        } catch let error as DocumentKitError {
            let folder = error.url ?? URL(fileURLWithPath: invocation.containerPath ?? "")
            var plain = error
            plain.url = nil
            throw DocsFailure.failure(
                "cannot use the container “\(folder.path)”: \(DocsFailure.reason(for: plain))")
        }
        let operands = invocation.operands
        switch command {
        case "list":
            try requireOperands(operands, command: command, names: [])
            try ListCommand.run(container, json: invocation.json)
        case "new":
            try requireOperands(operands, command: command, names: ["NAME"])
            try await NewCommand.run(container, name: operands[0], from: invocation.from)
        case "show":
            try requireOperands(operands, command: command, names: ["NAME"])
            try ShowCommand.run(container, name: operands[0])
        case "edit":
            try requireOperands(operands, command: command, names: ["NAME"])
            try await EditCommand.run(container, name: operands[0])
        case "rename":
            try requireOperands(operands, command: command, names: ["OLD", "NEW"])
            try RenameCommand.run(container, from: operands[0], to: operands[1])
        case "delete":
            try requireOperands(operands, command: command, names: ["NAME"])
            try DeleteCommand.run(container, name: operands[0])
        case "versions":
            try requireOperands(operands, command: command, names: ["NAME"])
            if invocation.prune {
                try PruneCommand.run(container, name: operands[0], json: invocation.json)
            } else {
                try VersionsCommand.run(container, name: operands[0], json: invocation.json)
            }
        case "restore":
            try requireOperands(operands, command: command, names: ["NAME", "VERSION"])
            try RestoreCommand.run(container, name: operands[0], versionID: operands[1])
        case "resolve":
            try requireOperands(operands, command: command, names: ["NAME"])
            let action: ResolveCommand.Action
            if invocation.merge {
                guard invocation.keep == nil else {
                    throw DocsFailure.usage(
                        "--merge and --keep do not go together: give one", command: command)
                }
                action = .merge
            } else if let keep = invocation.keep.flatMap(ResolveCommand.Keep.init(rawValue:)) {
                action = .keep(keep)
            } else {
                throw DocsFailure.usage(
                    invocation.keep.map { "--keep takes mine, theirs or both, not “\($0)”" }
                        ?? "--keep mine|theirs|both or --merge is required",
                    command: command)
            }
            try await ResolveCommand.run(
                container, name: operands[0], action: action, versionID: invocation.versionID)
        case "watch":
            try requireOperands(operands, command: command, names: [])
            try await WatchCommand.run(container, json: invocation.json)
        case "sync":
            try requireOperands(operands, command: command, names: [])
            if invocation.once && invocation.watch {
                throw DocsFailure.usage("--once and --watch do not go together", command: command)
            }
            if invocation.stop {
                if let other = [
                    (invocation.once, "--once"), (invocation.watch, "--watch"),
                    (invocation.resume != nil, "--resume"), (invocation.remote != nil, "--remote"),
                ].first(where: { $0.0 })?.1 {
                    throw DocsFailure.usage("--stop and \(other) do not go together", command: command)
                }
                try SyncCommand.stop(container)
                return .success
            }
            let configured = try RemoteCommand.configuration().container(at: container.url)?.pollSeconds
            let interval = Duration.milliseconds(
                Int64((try pollSeconds(invocation) ?? configured ?? 30) * 1000))
            var decision: SyncPause.Decision?
            if let resume = invocation.resume {
                guard let answer = SyncPause.Decision(rawValue: resume) else {
                    throw DocsFailure.usage(
                        "--resume takes delete or keep, not “\(Output.escaped(resume))”", command: command)
                }
                decision = answer
            }
            // An S3 store's settings are part of its address: folded into the URL, as
            // `docs remote add` keeps it.
            if invocation.remote == nil,
                let option = [
                    (invocation.endpoint, "--endpoint"), (invocation.region, "--region"),
                    (invocation.profile, "--profile"),
                ].first(where: { $0.0 != nil })?.1
            {
                throw DocsFailure.usage("\(option) goes with --remote s3://BUCKET/PREFIX", command: command)
            }
            let remote = try invocation.remote.map {
                try RemoteCommand.s3URL($0, invocation, command: command)
            }
            return try SyncCommand.run(
                container, remote: remote, options: SyncCommand.options(invocation),
                mode: invocation.watch ? .watch : .once, interval: interval, json: invocation.json,
                resume: decision)
        case "evict":
            try requireOperands(operands, command: command, names: ["NAME"])
            try OnDemandCommands.evict(container, name: operands[0])
        case "download":
            try requireOperands(operands, command: command, names: ["NAME"])
            return try OnDemandCommands.download(
                container, name: operands[0], options: SyncCommand.options(invocation))
        case "share":
            try requireOperands(operands, command: command, names: ["NAME"])
            return try OnDemandCommands.share(
                container, name: operands[0], expires: invocation.expires,
                options: SyncCommand.options(invocation), json: invocation.json)
        case "status":
            try requireOperands(operands, command: command, names: [])
            try StatusCommand.run(container, options: SyncCommand.options(invocation), json: invocation.json)
        default:
            throw DocsFailure.usage("unknown command “\(command)”", command: nil)
        }
        return .success
    }

    /// The seconds --interval gives, or nil when it is not given.
    static func pollSeconds(_ invocation: Invocation) throws -> Double? {
        guard let text = invocation.interval else { return nil }
        guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
            throw DocsFailure.usage(
                "--interval takes a number of seconds, not “\(text)”", command: invocation.command)
        }
        return seconds
    }

    /// Refuses options that mean nothing to `command`, rather than ignoring them.
    static func checkOptions(_ invocation: Invocation, command: String) throws {
        if invocation.json
            && !["list", "versions", "watch", "sync", "status", "remote", "share"].contains(command)
        {
            throw DocsFailure.usage(
                "--json is for list, versions, watch, sync, status, share and remote list", command: command)
        }
        if invocation.expires != nil && command != "share" {
            throw DocsFailure.usage("--expires is for share", command: command)
        }
        if command != "remote" {
            if invocation.identifier != nil {
                throw DocsFailure.usage("--identifier is for remote add", command: command)
            }
        }
        if !["sync", "status", "remote", "download", "share"].contains(command) {
            for (given, option) in [
                (invocation.user != nil, "--user"), (invocation.passwordFile != nil, "--password-file"),
                (invocation.unsafeServer, "--unsafe-server"), (invocation.allowHTTP, "--allow-http"),
                (invocation.caFile != nil, "--ca-file"),
            ] where given {
                throw DocsFailure.usage(
                    "\(option) is for sync, status, download, share and remote", command: command)
            }
        }
        if command != "sync" {
            for (given, option) in [
                (invocation.remote != nil, "--remote"), (invocation.resume != nil, "--resume"),
                (invocation.once, "--once"),
                (invocation.watch, "--watch"), (invocation.stop, "--stop"),
                (invocation.interval != nil && command != "remote", "--interval"),
            ] where given {
                throw DocsFailure.usage("\(option) is for sync", command: command)
            }
        }
        if !["sync", "remote"].contains(command) {
            for (given, option) in [
                (invocation.endpoint != nil, "--endpoint"), (invocation.region != nil, "--region"),
                (invocation.profile != nil, "--profile"),
            ] where given {
                throw DocsFailure.usage("\(option) is for sync and remote add", command: command)
            }
        }
        if invocation.onDemand && command != "remote" {
            throw DocsFailure.usage("--on-demand is for remote add", command: command)
        }
        if invocation.from != nil && command != "new" {
            throw DocsFailure.usage("--from is for new", command: command)
        }
        if invocation.keep != nil && command != "resolve" {
            throw DocsFailure.usage("--keep is for resolve", command: command)
        }
        if invocation.prune && command != "versions" {
            throw DocsFailure.usage("--prune is for versions", command: command)
        }
        if invocation.merge && command != "resolve" {
            throw DocsFailure.usage("--merge is for resolve", command: command)
        }
        if invocation.versionID != nil && command != "resolve" {
            throw DocsFailure.usage("--version-id is for resolve", command: command)
        }
    }

    static func requireOperands(_ operands: [String], command: String, names: [String]) throws {
        if operands.count < names.count {
            throw DocsFailure.usage(
                "\(command) needs \(names[operands.count...].joined(separator: " and "))", command: command)
        }
        if operands.count > names.count {
            throw DocsFailure.usage("unexpected argument “\(operands[names.count])”", command: command)
        }
    }
}
