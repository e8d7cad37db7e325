import Foundation

extension SyncRemotes {
    /// The S3 remote of an `s3://` URL, with credentials from the standard places, probed
    /// before it is handed out: a store whose conditions do not hold is refused.
    static func s3(_ text: String, options: RemoteOptions, environment: [String: String]) throws -> S3Remote {
        let (remote, probe) = try probeS3(text, options: options, environment: environment)
        if let refusal = probe.refusal {
            throw RemoteSetupError(.refused, "\(remote.displayName): \(refusal)")
        }
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
            throw RemoteSetupError(.credentials, "\(text): \(failure.description)")
        }
        var configuration = S3Remote.Configuration(
            bucket: address.bucket, prefix: address.prefix, endpoint: address.endpoint,
            region: address.region,
            credentials: credentials)
        configuration.addressing = address.addressing
        configuration.allowsInsecureHTTP = options.allowsInsecureHTTP
        configuration.caFile = options.caFile?.path
        // The credentials are the environment's or the profile's, named in the URL: no user
        // or password file of a WebDAV server belongs to it.
        configuration.address = RemoteAddress(
            url: address.url, allowsInsecureHTTP: options.allowsInsecureHTTP, caFile: options.caFile?.path)
        configuration.connections = options.connections
        configuration.timeout = options.timeout
        let remote: S3Remote
        do { remote = try S3Remote(configuration) } catch let error as RemoteError {
            throw RemoteSetupError(.invalidAddress, "\(text): \(error.detail ?? error.description)")
        }
        // Probed the first time (and kept), as a WebDAV server is: racing writes cost the
        // store seconds.
        let kept = options.probesAgain ? nil : S3Settings.read(for: address.url, stateHome: options.stateHome)
        let probe: S3Probe
        if let kept {
            probe = kept.probe
        } else {
            do { probe = try S3Probe.run(on: remote) } catch let error as RemoteError {
                throw RemoteSetupError.probeFailed(error, remote.displayName)
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
