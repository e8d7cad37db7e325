import Foundation

/// Where S3 credentials come from, in the order the AWS tools read them: the environment
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), then the shared
/// credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`) at the profile
/// `AWS_PROFILE` names (else the remote's own, else `default`).
///
/// Nothing of ours stores them: the remote's settings name a profile at most.
///
/// For example:
///
/// ```swift
/// let credentials = try S3CredentialSources().credentials()
/// ```
public struct S3CredentialSources: Sendable {
    /// The environment to read; the process's by default.
    public var environment: [String: String]
    /// The home folder holding `.aws/credentials`; `$HOME` by default.
    public var home: URL?
    /// The profile to read when `AWS_PROFILE` names none.
    public var profile: String?

    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment, home: URL? = nil,
        profile: String? = nil
    ) {
        self.environment = environment
        self.home = home
        self.profile = profile
    }

    /// Why no credentials were found, in words that name where they were looked for.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// The profile read: `AWS_PROFILE`, else the remote's, else `default`.
    public var profileName: String {
        nonEmpty(environment["AWS_PROFILE"]) ?? profile ?? "default"
    }

    /// The shared credentials file.
    public var credentialsFile: URL {
        if let file = nonEmpty(environment["AWS_SHARED_CREDENTIALS_FILE"]) {
            return URL(fileURLWithPath: file)
        }
        let home = home ?? URL(fileURLWithPath: nonEmpty(environment["HOME"]) ?? NSHomeDirectory())
        return home.appendingPathComponent(".aws/credentials")
    }

    /// The credentials, from the first place that has them.
    ///
    /// - Throws: ``Failure`` when none has them, or the file's profile is incomplete.
    public func credentials() throws -> S3Credentials {
        if let key = nonEmpty(environment["AWS_ACCESS_KEY_ID"]) {
            guard let secret = nonEmpty(environment["AWS_SECRET_ACCESS_KEY"]) else {
                throw Failure(description: "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
            }
            return S3Credentials(
                accessKeyID: key, secretAccessKey: secret,
                sessionToken: nonEmpty(environment["AWS_SESSION_TOKEN"]),
                source: "AWS_ACCESS_KEY_ID in the environment")
        }
        let file = credentialsFile
        guard let data = FileManager.default.contents(atPath: file.path) else {
            throw Failure(
                description:
                    "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or put a [\(profileName)] profile in \(file.path)"
            )
        }
        let profiles = Self.profiles(in: String(decoding: data, as: UTF8.self))
        guard let values = profiles[profileName] else {
            throw Failure(description: "\(file.path) has no [\(profileName)] profile")
        }
        guard let key = nonEmpty(values["aws_access_key_id"]),
            let secret = nonEmpty(values["aws_secret_access_key"])
        else {
            throw Failure(
                description:
                    "the [\(profileName)] profile in \(file.path) lacks aws_access_key_id or aws_secret_access_key"
            )
        }
        return S3Credentials(
            accessKeyID: key, secretAccessKey: secret, sessionToken: nonEmpty(values["aws_session_token"]),
            source: "the [\(profileName)] profile in \(file.path)")
    }

    /// The profiles of an AWS credentials file (INI: `[name]` sections of `key = value`
    /// lines, `#` and `;` comments), keys lowercased.
    static func profiles(in text: String) -> [String: [String: String]] {
        var profiles: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                var name = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                // ~/.aws/config spells them "[profile name]"; the credentials file "[name]".
                if name.hasPrefix("profile ") {
                    name = String(name.dropFirst(8)).trimmingCharacters(in: .whitespaces)
                }
                current = name
                profiles[name, default: [:]] = profiles[name] ?? [:]
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            profiles[current]?[key] = value
        }
        return profiles
    }

    private func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
