/// What the command line asked for: a subcommand, its operands, and the options, which may
/// appear anywhere (`docs --container ~/notes list` and `docs list --container ~/notes`).
struct Invocation: Equatable {
    var command: String?
    var operands: [String] = []
    var containerPath: String?
    var json = false
    var help = false
    var version = false
    var from: String?
    var keep: String?
    var versionID: String?
    /// `resolve --merge`: merge the two sides instead of keeping one.
    var merge = false
    /// `versions NAME --prune`: remove the old versions to free space.
    var prune = false
    var remote: String?
    var once = false
    /// `sync --resume delete|keep`: the answer to a paused sync.
    var resume: String?
    /// `remote add --on-demand`: documents new from the remote stay on the server.
    var onDemand = false
    var watch = false
    /// `sync --stop`: stop the container's agent.
    var stop = false
    var interval: String?
    /// `share NAME --expires SECONDS`: how long the link works.
    var expires: String?
    var user: String?
    var passwordFile: String?
    var caFile: String?
    /// `--encrypt`: the remote is (or becomes) a Cryptomator vault.
    var encrypt = false
    /// `--keep-key`: the vault's unlocked keys are kept in a private file for the agent.
    var keepKey = false
    /// `remote check NAME --repair`: remove the leftovers the check finds.
    var repair = false
    var passphraseFile: String?
    /// `remote passphrase NAME --new-passphrase-file FILE`.
    var newPassphraseFile: String?
    var unsafeServer = false
    var allowHTTP = false
    var identifier: String?
    /// `remote add … s3://bucket/prefix --endpoint URL --region R --profile P`.
    var endpoint: String?
    var region: String?
    var profile: String?

    /// Parses the arguments after the program name.
    ///
    /// - Throws: ``DocsFailure`` with the usage exit status for an unknown option or a
    ///   missing option value.
    init(parsing arguments: [String]) throws {
        var index = 0
        var onlyOperands = false
        func value(for option: String, inline: String?) throws -> String {
            if let inline { return inline }
            index += 1
            guard index < arguments.count else {
                throw DocsFailure.usage("\(option) needs a value", command: command)
            }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            defer { index += 1 }
            if onlyOperands || argument == "-" || !argument.hasPrefix("-") {
                if command == nil { command = argument } else { operands.append(argument) }
                continue
            }
            if argument == "--" {
                onlyOperands = true
                continue
            }
            let option: String
            let inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                option = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            } else {
                option = argument
                inline = nil
            }
            switch option {
            case "--container": containerPath = try value(for: option, inline: inline)
            case "--from": from = try value(for: option, inline: inline)
            case "--keep": keep = try value(for: option, inline: inline)
            case "--version-id": versionID = try value(for: option, inline: inline)
            case "--remote": remote = try value(for: option, inline: inline)
            case "--resume": resume = try value(for: option, inline: inline)
            case "--interval": interval = try value(for: option, inline: inline)
            case "--expires": expires = try value(for: option, inline: inline)
            case "--user": user = try value(for: option, inline: inline)
            case "--identifier": identifier = try value(for: option, inline: inline)
            case "--endpoint": endpoint = try value(for: option, inline: inline)
            case "--region": region = try value(for: option, inline: inline)
            case "--profile": profile = try value(for: option, inline: inline)
            case "--password-file": passwordFile = try value(for: option, inline: inline)
            case "--ca-file": caFile = try value(for: option, inline: inline)
            case "--passphrase-file": passphraseFile = try value(for: option, inline: inline)
            case "--new-passphrase-file": newPassphraseFile = try value(for: option, inline: inline)
            case "--passphrase", "--new-passphrase":
                throw DocsFailure.usage(
                    "a passphrase on the command line can be read by every user of this computer; "
                        + "give it in DOCS_PASSPHRASE, --passphrase-file FILE (mode 600), or type it when asked",
                    command: command)
            case "--password":
                throw DocsFailure.usage(
                    "a password on the command line can be read by every user of this computer; "
                        + "give it in ~/.netrc, DOCS_PASSWORD or --password-file FILE (mode 600)",
                    command: command)
            case "--unsafe-server", "--allow-http":
                guard inline == nil else {
                    throw DocsFailure.usage("\(option) takes no value", command: command)
                }
                if option == "--unsafe-server" { unsafeServer = true } else { allowHTTP = true }
            case "--once", "--watch", "--stop", "--on-demand", "--merge", "--prune", "--encrypt",
                "--keep-key", "--repair":
                guard inline == nil else {
                    throw DocsFailure.usage("\(option) takes no value", command: command)
                }
                switch option {
                case "--once": once = true
                case "--watch": watch = true
                case "--stop": stop = true
                case "--merge": merge = true
                case "--prune": prune = true
                case "--encrypt": encrypt = true
                case "--keep-key": keepKey = true
                case "--repair": repair = true
                default: onDemand = true
                }
            case "--json", "-h", "--help", "--version":
                guard inline == nil else {
                    throw DocsFailure.usage("\(option) takes no value", command: command)
                }
                switch option {
                case "--json": json = true
                case "--version": version = true
                default: help = true
                }
            default:
                throw DocsFailure.usage("unknown option \(option)", command: command)
            }
        }
    }
}
