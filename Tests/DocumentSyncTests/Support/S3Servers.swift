import Foundation
import Testing

@testable import DocumentSync

#if canImport(Glibc)
    import Glibc
#endif

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

    /// One cluster of scripts/s3-servers: where it listens and where its files are.
    struct Cluster: Sendable {
        var endpoint: URL
        var region: String
        var bucket: String
        /// Its folder: credentials, the servers' files.
        var folder: URL

        /// The cluster every S3 test shares, from the environment.
        static func shared() throws -> Cluster {
            Cluster(
                endpoint: URL(string: try value("DOCUMENTSYNC_S3_ENDPOINT"))!,
                region: try value("DOCUMENTSYNC_S3_REGION"), bucket: try value("DOCUMENTSYNC_S3_BUCKET"),
                folder: URL(fileURLWithPath: try value("DOCUMENTSYNC_S3_DIR")))
        }

        /// The cluster whose volume servers the blocking tests kill and start again
        /// (`DOCUMENTSYNC_S3_OUTAGE_DIR`, started by scripts/test beside the shared one), so
        /// that no other test's request meets a server down; read from its servers.env.
        static func outages() throws -> Cluster {
            let folder = URL(fileURLWithPath: try value("DOCUMENTSYNC_S3_OUTAGE_DIR"))
            let text = try String(contentsOf: folder.appendingPathComponent("servers.env"), encoding: .utf8)
            var values: [String: String] = [:]
            for line in text.split(separator: "\n") where line.hasPrefix("export ") {
                let assignment = line.dropFirst(7)
                guard let equals = assignment.firstIndex(of: "=") else { continue }
                values[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
            }
            guard let endpoint = values["DOCUMENTSYNC_S3_ENDPOINT"].flatMap(URL.init(string:)),
                let region = values["DOCUMENTSYNC_S3_REGION"], let bucket = values["DOCUMENTSYNC_S3_BUCKET"]
            else {
                throw WebDAVServers.Missing(
                    description: "\(folder.path)/servers.env lacks the cluster's address")
            }
            return Cluster(endpoint: endpoint, region: region, bucket: bucket, folder: folder)
        }

        /// The access key the gateway was started with.
        func credentials() throws -> S3Credentials {
            func read(_ name: String) throws -> String {
                try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            return S3Credentials(
                accessKeyID: try read("access-key-id"), secretAccessKey: try read("secret-access-key"))
        }

        /// The configuration of `prefix` in the cluster's bucket.
        func configuration(prefix: String) throws -> S3Remote.Configuration {
            var configuration = S3Remote.Configuration(
                bucket: bucket, prefix: prefix, endpoint: endpoint, region: region,
                credentials: try credentials())
            configuration.timeout = 10
            return configuration
        }
    }

    /// A prefix of the test bucket no other test uses, named after the test.
    static func freshPrefix(_ name: String) -> String {
        let safe = name.filter { $0.isLetter || $0.isNumber }.prefix(40)
        return "t-\(safe)-\(UUID().uuidString.prefix(8))"
    }

    /// The configuration of `prefix` in the shared cluster's bucket.
    static func configuration(prefix: String) throws -> S3Remote.Configuration {
        try Cluster.shared().configuration(prefix: prefix)
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

    /// `scripts/s3-servers ACTION DIR 1` on `cluster`, spawned and waited for directly: the test's thread
    /// blocks every signal, which a server it starts must not inherit, and Foundation's
    /// `Process` was seen never to reap the script here.
    static func volumeServer(_ action: String, of cluster: Cluster) throws {
        let arguments = [try value("DOCUMENTSYNC_S3_SERVERS"), action, cluster.folder.path, "1"]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        var status: Int32 = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ) == 0
        if spawned { while waitpid(pid, &status, 0) == -1, errno == EINTR {} }
        guard spawned, status == 0 else {
            throw WebDAVServers.Missing(description: "scripts/s3-servers \(action) failed (status \(status))")
        }
    }

}
