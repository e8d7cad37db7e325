import Foundation
import Synchronization
import Testing

@testable import DocumentSync

/// The remote a ``SyncSimulation`` runs on: what the devices call, and what the run does to
/// it behind their backs (another client's blind write, a look at every byte it holds).
protocol SimulationTarget: AnyObject {
    /// The remote every device syncs with.
    var remote: any Remote { get }
    /// Every file's bytes and every folder, as the remote holds them now.
    func snapshot() throws -> SimulatedRemote.Snapshot
    /// Another client writes the file over whatever is there, making its folders.
    func writeAsAnotherClient(_ path: RemotePath, _ bytes: Data) throws
    /// No more faults: for the quiet end of a run.
    func stopFaults()
    /// Bytes the remote's own racing writers wrote over (none but in the simulated remote).
    var bytesReplacedByRacingWriters: [Data] { get }
    /// The faults, in words, for the run's first line.
    var faultDescription: String { get }
    /// Called before each step (from 1): what the target does to the remote then (a server
    /// killed, started again), in words for the trace; nil for nothing.
    func willPerform(step: Int) throws -> String?
}

extension SimulationTarget {
    func willPerform(step: Int) throws -> String? { nil }
}

extension SimulatedRemote: SimulationTarget {
    var remote: any Remote { self }

    func writeAsAnotherClient(_ path: RemotePath, _ bytes: Data) throws {
        _ = try directWrite(path, bytes)
    }

    func stopFaults() {
        faults = .none
        removeHostileNames()
    }

    var faultDescription: String { SyncSimulation.describe(faults) }
}

/// A real WebDAV server of scripts/webdav-servers (Apache, wsgidav, SabreDAV) as the
/// simulation's remote: a fresh collection, the devices' requests through a ``FaultProxy`` that
/// breaks some of them (connections reset before or after the request, answers cut short,
/// answers held past the timeout, 503s), the other client's writes straight to the server, and
/// the snapshot read from the server's folder on disk.
final class WebDAVTarget: SimulationTarget {
    let remote: any Remote
    private let direct: WebDAVRemote
    private let folder: URL
    private let proxy: FaultProxy?
    let faultDescription: String

    /// How often each fault strikes a request, in 100.
    struct Faults: Sendable {
        var resetBefore = 0
        var resetAfter = 0
        var cut = 0
        var stall = 0
        var unavailable = 0

        var isNone: Bool { resetBefore + resetAfter + cut + stall + unavailable == 0 }

        /// None in one run of five; otherwise each kind at 1–3% or not at all, and stalls at 1%
        /// or not.
        static func draw(_ random: inout SeededGenerator) -> Faults {
            guard Int.random(in: 0..<5, using: &random) != 0 else { return Faults() }
            func chance() -> Int { Bool.random(using: &random) ? Int.random(in: 1...3, using: &random) : 0 }
            return Faults(
                resetBefore: chance(), resetAfter: chance(), cut: chance(),
                stall: Bool.random(using: &random) ? 1 : 0, unavailable: chance())
        }

        var description: String {
            "reset before \(resetBefore)%, after \(resetAfter)%, cut \(cut)%, stall \(stall)%, 503 \(unavailable)%"
        }
    }

    /// - Parameters:
    ///   - server: The server.
    ///   - random: The run's generator: the faults are drawn from it, and each request's fault
    ///     from a generator split from it.
    ///   - writeProtocol: How the devices' writes are kept safe; by default what the probe
    ///     finds for the server.
    init(
        _ server: WebDAVServers.Server, random: inout SeededGenerator, name: String = #function,
        writeProtocol: WebDAVRemote.WriteProtocol? = nil
    ) throws {
        let faults = server == .tls ? Faults() : Faults.draw(&random)
        let writeProtocol = writeProtocol ?? server.writeProtocol
        let collection = try WebDAVServers.collection(on: server, name) { $0.writeProtocol = writeProtocol }
        direct = collection.remote
        folder = collection.folder
        if faults.isNone {
            proxy = nil
            remote = direct
            faultDescription = "none"
        } else {
            let proxy = try FaultProxy(target: collection.url)
            var configuration = WebDAVRemote.Configuration(
                url: proxy.url(for: collection.url), credentials: try WebDAVServers.credentials(),
                writeProtocol: writeProtocol)
            // Long enough for any request on loopback, short enough that a held answer costs
            // little: the stall fault holds one for longer.
            configuration.timeout = 1
            configuration.hasFileIDs = false
            configuration.verifiesWrites = server.verifiesWrites
            remote = try WebDAVRemote(configuration)
            let roller = FaultRoller(faults, generator: random.split())
            proxy.decide = { _, _ in roller.next() }
            self.proxy = proxy
            faultDescription = faults.description
        }
    }

    deinit { proxy?.stop() }

    func stopFaults() { proxy?.decide = { _, _ in .none } }

    var bytesReplacedByRacingWriters: [Data] { [] }

    func writeAsAnotherClient(_ path: RemotePath, _ bytes: Data) throws {
        var folder = RemotePath.root
        for component in path.parent.components {
            folder = folder.appending(component)
            if try direct.entry(at: folder) == nil { try direct.makeFolder(folder) }
        }
        // A blind write, as a client that does not use conditions makes it.
        let answer = try direct.send(
            direct.request("PUT", direct.url(path)), body: .data(bytes), .write, path)
        guard (200...299).contains(answer.status) else { throw direct.error(status: answer, .write, path) }
    }

    /// The collection's files and folders on the server's disk, without the server's own
    /// (Apache's `.DAV` and `.davfs.tmp…`, SabreDAV's `.sabredav`) and the temporary files of
    /// writes a fault cut short.
    func snapshot() throws -> SimulatedRemote.Snapshot {
        var snapshot = SimulatedRemote.Snapshot()
        var folders: [(URL, RemotePath)] = [(folder, .root)]
        while let (url, path) = folders.popLast() {
            for name in try FileManager.default.contentsOfDirectory(atPath: url.path) {
                if name == ".DAV" || name.hasPrefix(".davfs.tmp") || name == ".sabredav"
                    || name.hasPrefix(WebDAVRemote.temporaryPrefix)
                {
                    continue
                }
                let child = url.appendingPathComponent(name)
                let childPath = path.appending(name)
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: child.path, isDirectory: &isFolder) else {
                    continue
                }
                if isFolder.boolValue {
                    snapshot.folders.insert(childPath)
                    folders.append((child, childPath))
                } else {
                    snapshot.files[childPath] = try Data(contentsOf: child)
                }
            }
        }
        return snapshot
    }
}

/// The SeaweedFS cluster of scripts/s3-servers as the simulation's remote: a fresh prefix of
/// the test bucket, the devices' requests through a ``FaultProxy`` that breaks some of them
/// (as for Apache), and in some runs one of the two volume servers killed at one step and
/// started again a few steps later, as a crashed machine is: with every write kept on both,
/// writes fail while it is down. The other client's writes and the snapshot go straight to
/// the gateway.
final class S3Target: SimulationTarget {
    let remote: any Remote
    private let direct: S3Remote
    private let proxy: FaultProxy?
    let faultDescription: String
    /// The step volume server 1 is killed before, and the step it is started again before.
    private let outage: (kill: Int, restart: Int)?
    private var volumeIsDown = false
    private let cluster: S3Servers.Cluster

    init(random: inout SeededGenerator, name: String = #function, outages: Bool) throws {
        let faults = WebDAVTarget.Faults.draw(&random)
        if outages, Bool.random(using: &random) {
            let kill = Int.random(in: 2...8, using: &random)
            outage = (kill, kill + Int.random(in: 2...6, using: &random))
        } else {
            outage = nil
        }
        let cluster = try S3Servers.Cluster.outages()
        self.cluster = cluster
        let configuration = try cluster.configuration(prefix: S3Servers.freshPrefix(name))
        direct = try S3Remote(configuration)
        var outageText = ""
        if let outage { outageText = ", volume server 1 down from step \(outage.kill) to \(outage.restart)" }
        if faults.isNone {
            proxy = nil
            remote = direct
            faultDescription = "none" + outageText
        } else {
            let endpoint = try #require(configuration.endpoint)
            let proxy = try FaultProxy(target: endpoint, rewritesHost: false)
            var proxied = configuration
            proxied.endpoint = proxy.url(for: endpoint)
            proxied.timeout = 1
            remote = try S3Remote(proxied)
            let roller = FaultRoller(faults, generator: random.split())
            proxy.decide = { _, _ in roller.next() }
            self.proxy = proxy
            faultDescription = faults.description + outageText
        }
    }

    deinit {
        proxy?.stop()
        if volumeIsDown { try? S3Servers.volumeServer("start-volume", of: cluster) }
    }

    func willPerform(step: Int) throws -> String? {
        guard let outage else { return nil }
        if step == outage.kill {
            try S3Servers.volumeServer("stop-volume", of: cluster)
            volumeIsDown = true
            return "volume server 1 killed"
        }
        if step == outage.restart {
            try restartVolume()
            return "volume server 1 started again"
        }
        return nil
    }

    func stopFaults() {
        proxy?.decide = { _, _ in .none }
        try? restartVolume()
    }

    /// Starts the volume server again, and waits (30 s at most) until the store takes writes.
    private func restartVolume() throws {
        guard volumeIsDown else { return }
        try S3Servers.volumeServer("start-volume", of: cluster)
        volumeIsDown = false
        let probe = RemotePath(".documentsync-volume-probe")
        let deadline = Date().addingTimeInterval(30)
        while true {
            do {
                let tag = try direct.write(probe, from: UploadSource(Data("probe".utf8)), condition: .absent)
                try direct.delete(probe, condition: .matches(try #require(tag)))
                return
            } catch {
                if Date() > deadline { throw error }
                Thread.sleep(forTimeInterval: 0.3)
            }
        }
    }

    var bytesReplacedByRacingWriters: [Data] { [] }

    func writeAsAnotherClient(_ path: RemotePath, _ bytes: Data) throws {
        var folder = RemotePath.root
        for component in path.parent.components {
            folder = folder.appending(component)
            if try direct.entry(at: folder) == nil { try direct.makeFolder(folder) }
        }
        // A blind write, as a client that does not use conditions makes it.
        let answer = try direct.send(
            direct.request("PUT", key: direct.key(path), payloadHash: S3Signer.sha256Hex(bytes)),
            body: .data(bytes),
            .write, path)
        guard (200...299).contains(answer.status) else { throw direct.error(status: answer, .write, path) }
    }

    /// Every object under the prefix, hidden ones too: markers as folders, the folders keys
    /// imply, the files' bytes.
    func snapshot() throws -> SimulatedRemote.Snapshot {
        var snapshot = SimulatedRemote.Snapshot()
        var objects: [S3Remote.Object] = []
        try direct.listPages(prefix: direct.keyPrefix, delimiter: false, .list, .root) {
            objects += $0.objects
        }
        for object in objects where !direct.isTombstone(object) {
            let isMarker = object.key.hasSuffix("/")
            guard let path = direct.path(ofKey: isMarker ? String(object.key.dropLast()) : object.key),
                !path.isRoot
            else { continue }
            var folder = path.parent
            while !folder.isRoot {
                snapshot.folders.insert(folder)
                folder = folder.parent
            }
            if isMarker {
                snapshot.folders.insert(path)
            } else {
                var bytes = Data()
                _ = try direct.read(path) { bytes.append($0) }
                snapshot.files[path] = bytes
            }
        }
        return snapshot
    }
}

/// Draws each request's fault, in the order the proxy sees requests.
private final class FaultRoller: Sendable {
    private let faults: WebDAVTarget.Faults
    private let generator: Mutex<SeededGenerator>

    init(_ faults: WebDAVTarget.Faults, generator: SeededGenerator) {
        self.faults = faults
        self.generator = Mutex(generator)
    }

    func next() -> FaultProxy.Fault {
        let roll = generator.withLock { Int.random(in: 0..<100, using: &$0) }
        var bound = faults.resetBefore
        if roll < bound { return .resetBeforeRequest }
        bound += faults.resetAfter
        if roll < bound { return .resetAfterRequest }
        bound += faults.cut
        if roll < bound { return .cutResponseBody }
        bound += faults.stall
        if roll < bound { return .stall(seconds: 1.5) }
        bound += faults.unavailable
        if roll < bound { return .status(503) }
        return .none
    }
}
