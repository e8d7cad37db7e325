import Foundation

/// An S3 remote as one URL, as `docs remote add` records it: `s3://bucket/prefix`, with the
/// store's endpoint, region, addressing and credentials profile in the query
/// (`?endpoint=https://minio.example.com&region=eu-west-1&profile=work`). Never a secret:
/// credentials come from ``S3CredentialSources`` when the remote is used.
public struct S3Address: Sendable, Equatable {
    public var bucket: String
    public var prefix: String
    /// The store's endpoint; nil for AWS.
    public var endpoint: URL?
    public var region: String
    /// The profile of `~/.aws/credentials` to read when `AWS_PROFILE` names none.
    public var profile: String?
    /// Forced addressing (`addressing=path` or `virtual`); nil to choose by the endpoint.
    public var addressing: S3Remote.Addressing?

    public init(
        bucket: String, prefix: String = "", endpoint: URL? = nil, region: String = "us-east-1",
        profile: String? = nil, addressing: S3Remote.Addressing? = nil
    ) {
        self.bucket = bucket
        self.prefix = prefix.split(separator: "/").joined(separator: "/")
        self.endpoint = endpoint
        self.region = region
        self.profile = profile
        self.addressing = addressing
    }

    /// The address an `s3://` URL spells; a message naming what is wrong otherwise.
    public init(parsing text: String) throws {
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "s3",
            let bucket = components.host, !bucket.isEmpty
        else {
            throw SyncError(.unusable, "“\(text)” is not an S3 URL (s3://bucket/prefix)")
        }
        guard components.user == nil, components.password == nil else {
            var shown = components
            (shown.user, shown.password) = (nil, nil)
            throw SyncError(
                .unusable,
                "“\(shown.string ?? "s3://\(bucket)")” holds credentials before its bucket; give them in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or ~/.aws/credentials"
            )
        }
        var endpoint: URL?
        var region = "us-east-1"
        var profile: String?
        var addressing: S3Remote.Addressing?
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "endpoint":
                guard let url = URL(string: value), url.scheme != nil, url.host != nil else {
                    throw SyncError(.unusable, "“\(text)”: the endpoint “\(value)” is not an http(s) URL")
                }
                endpoint = url
            case "region": region = value
            case "profile": profile = value.isEmpty ? nil : value
            case "addressing":
                switch value {
                case "path": addressing = .path
                case "virtual": addressing = .virtualHost
                default:
                    throw SyncError(.unusable, "“\(text)”: addressing is “path” or “virtual”, not “\(value)”")
                }
            default:
                throw SyncError(
                    .unusable,
                    "“\(text)”: unknown setting “\(item.name)” (endpoint, region, profile, addressing)")
            }
        }
        self.init(
            bucket: bucket, prefix: components.percentEncodedPath.removingPercentEncoding ?? components.path,
            endpoint: endpoint, region: region, profile: profile, addressing: addressing)
    }

    /// The URL of the address, settings in a fixed order.
    public var url: String {
        var components = URLComponents()
        components.scheme = "s3"
        components.host = bucket
        components.path = prefix.isEmpty ? "" : "/" + prefix
        var items: [URLQueryItem] = []
        if let endpoint { items.append(URLQueryItem(name: "endpoint", value: endpoint.absoluteString)) }
        if region != "us-east-1" || endpoint != nil {
            items.append(URLQueryItem(name: "region", value: region))
        }
        if let profile { items.append(URLQueryItem(name: "profile", value: profile)) }
        if let addressing {
            items.append(URLQueryItem(name: "addressing", value: addressing == .path ? "path" : "virtual"))
        }
        components.queryItems = items.isEmpty ? nil : items
        return components.string ?? "s3://\(bucket)"
    }
}

extension SyncRemotes {
    /// The S3 remote of an `s3://` URL, with credentials from the standard places, probed
    /// before it is handed out: a store whose conditions do not hold is refused.
    static func s3(_ text: String, options: RemoteOptions, environment: [String: String]) throws -> S3Remote {
        let (remote, probe) = try probeS3(text, options: options, environment: environment)
        if let refusal = probe.refusal { throw SyncError(.unusable, "\(remote.displayName): \(refusal)") }
        return remote
    }

    /// The S3 remote of an `s3://` URL and what its probe found (kept from the first time
    /// unless ``RemoteOptions/probesAgain``; `docs remote test` probes again); the remote
    /// deletes as the probe says the store can.
    public static func probeS3(
        _ text: String, options: RemoteOptions = RemoteOptions(),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> (remote: S3Remote, probe: S3Probe) {
        let address = try S3Address(parsing: text)
        let sources = S3CredentialSources(environment: environment, profile: address.profile)
        let credentials: S3Credentials
        do { credentials = try sources.credentials() } catch let failure as S3CredentialSources.Failure {
            throw SyncError(.unusable, "\(text): \(failure.description)")
        }
        var configuration = S3Remote.Configuration(
            bucket: address.bucket, prefix: address.prefix, endpoint: address.endpoint,
            region: address.region,
            credentials: credentials)
        configuration.addressing = address.addressing
        configuration.allowsInsecureHTTP = options.allowsInsecureHTTP
        // The credentials are the environment's or the profile's, named in the URL: no user
        // or password file of a WebDAV server belongs to it.
        configuration.address = RemoteAddress(
            url: address.url, allowsInsecureHTTP: options.allowsInsecureHTTP)
        configuration.connections = options.connections
        configuration.timeout = options.timeout
        let remote: S3Remote
        do { remote = try S3Remote(configuration) } catch let error as RemoteError {
            throw SyncError(.unusable, "\(text): \(error.detail ?? error.description)")
        }
        // Probed the first time (and kept), as a WebDAV server is: racing writes cost the
        // store seconds.
        let kept = options.probesAgain ? nil : S3Settings.read(for: address.url, stateHome: options.stateHome)
        let probe: S3Probe
        if let kept {
            probe = kept.probe
        } else {
            do { probe = try S3Probe.run(on: remote) } catch let error as RemoteError {
                throw SyncError.probeFailed(error, remote.displayName)
            }
            try S3Settings(url: address.url, probe: probe, probed: Date()).write(stateHome: options.stateHome)
        }
        guard probe.deletes != configuration.deletes else { return (remote, probe) }
        configuration.deletes = probe.deletes
        return (try S3Remote(configuration), probe)
    }
}

/// What is kept of an S3 remote: its address (no secret) and what the probe found.
struct S3Settings: KeptRemoteSettings, Equatable {
    var url: String
    var probe: S3Probe
    var probed: Date
}
