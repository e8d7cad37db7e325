import Foundation

/// A `~/.netrc` file: `machine HOST login NAME password SECRET` entries, and a `default` one,
/// separated by any white space, as curl and ftp read it (`macdef` blocks are skipped).
struct NetrcFile {
    struct Entry {
        var machine: String?
        var login: String?
        var password: String?
    }

    var entries: [Entry]

    /// The file at `url`, or nil when there is none.
    static func read(_ url: URL) throws(CredentialsFileFailure) -> NetrcFile? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CredentialsFileFailure(description: "\(url.path) cannot be read")
        }
        return NetrcFile(parsing: String(decoding: data, as: UTF8.self))
    }

    init(parsing text: String) {
        var entries: [Entry] = []
        var tokens = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" })
            .map(String.init)[...]
        while let token = tokens.popFirst() {
            switch token {
            case "machine": entries.append(Entry(machine: tokens.popFirst()))
            case "default": entries.append(Entry(machine: nil))
            case "login", "password", "account":
                let value = tokens.popFirst()
                guard !entries.isEmpty else { continue }
                if token == "login" { entries[entries.count - 1].login = value }
                if token == "password" { entries[entries.count - 1].password = value }
            case "macdef":
                // A macro runs to the next empty line; its words are not entries.
                _ = tokens.popFirst()
            default: continue
            }
        }
        self.entries = entries
    }

    /// The first entry for `host` (and `login`, when given) with a password; else the default.
    func entry(host: String, login: String?) -> Entry? {
        let matching = entries.filter {
            $0.password != nil && (login == nil || $0.login == nil || $0.login == login)
        }
        return matching.first { $0.machine?.lowercased() == host.lowercased() }
            ?? matching.first { $0.machine == nil }
    }
}
