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

    /// The address an `s3://` URL spells.
    ///
    /// - Throws: ``RemoteSetupError`` of kind `.invalidAddress`, naming what is wrong.
    public init(parsing text: String) throws {
        guard let components = URLComponents(string: text), components.scheme?.lowercased() == "s3",
            let bucket = components.host, !bucket.isEmpty
        else {
            throw RemoteSetupError(.invalidAddress, "“\(text)” is not an S3 URL (s3://bucket/prefix)")
        }
        guard components.user == nil, components.password == nil else {
            var shown = components
            (shown.user, shown.password) = (nil, nil)
            throw RemoteSetupError(
                .invalidAddress,
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
                    throw RemoteSetupError(
                        .invalidAddress, "“\(text)”: the endpoint “\(value)” is not an http(s) URL")
                }
                endpoint = url
            case "region": region = value
            case "profile": profile = value.isEmpty ? nil : value
            case "addressing":
                switch value {
                case "path": addressing = .path
                case "virtual": addressing = .virtualHost
                default:
                    throw RemoteSetupError(
                        .invalidAddress, "“\(text)”: addressing is “path” or “virtual”, not “\(value)”")
                }
            default:
                throw RemoteSetupError(
                    .invalidAddress,
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
