import Foundation
import Testing

@testable import DocumentSync

/// The SeaweedFS cluster `scripts/s3-servers` runs for the tests (scripts/test starts it and
/// passes its address in `DOCUMENTSYNC_S3_*`), and a fresh prefix in its bucket for each test.
enum S3Servers {
    /// The environment scripts/test gives, or a message saying how to get it.
    static func value(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw WebDAVServers.Missing(
                description:
                    "\(name) is not set: run the tests with scripts/test, or start the cluster with "
                    + "`scripts/s3-servers start DIR` and `source DIR/servers.env` first")
        }
        return value
    }

    /// The cluster's folder (its credentials, its servers' files).
    static func folder() throws -> URL { URL(fileURLWithPath: try value("DOCUMENTSYNC_S3_DIR")) }

    /// The access key the gateway was started with.
    static func credentials() throws -> S3Credentials {
        func read(_ name: String) throws -> String {
            try String(contentsOf: try folder().appendingPathComponent(name), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return S3Credentials(
            accessKeyID: try read("access-key-id"), secretAccessKey: try read("secret-access-key"))
    }

    static func endpoint() throws -> URL { URL(string: try value("DOCUMENTSYNC_S3_ENDPOINT"))! }

    static func bucket() throws -> String { try value("DOCUMENTSYNC_S3_BUCKET") }

    /// A prefix of the test bucket no other test uses, named after the test.
    static func freshPrefix(_ name: String) -> String {
        let safe = name.filter { $0.isLetter || $0.isNumber }.prefix(40)
        return "t-\(safe)-\(UUID().uuidString.prefix(8))"
    }

    /// The configuration of `prefix` in the test bucket.
    static func configuration(prefix: String) throws -> S3Remote.Configuration {
        var configuration = S3Remote.Configuration(
            bucket: try bucket(), prefix: prefix, endpoint: try endpoint(),
            region: try value("DOCUMENTSYNC_S3_REGION"), credentials: try credentials())
        configuration.timeout = 10
        return configuration
    }

    /// A remote of a new, empty prefix for one test.
    ///
    /// - Parameter configure: Changes to the remote's configuration (the multipart threshold,
    ///   a timeout).
    static func remote(
        _ name: String = #function, configure: (inout S3Remote.Configuration) -> Void = { _ in }
    ) throws -> S3Remote {
        var configuration = try configuration(prefix: freshPrefix(name))
        configure(&configuration)
        return try S3Remote(configuration)
    }
}
