import DocumentKit
import Foundation
import Synchronization

/// Hears a query's notifications and records when each arrived.
final class QueryTimer: Sendable {
    let finished = DispatchSemaphore(value: 0)
    let updated = DispatchSemaphore(value: 0)
    /// For each did-update: when it was heard and whether it added or removed items.
    let updates = Mutex<[(time: UInt64, added: Int, removed: Int)]>([])
    private let observers = Mutex<Observers>(Observers())

    struct Observers: @unchecked Sendable { var tokens: [NSObjectProtocol] = [] }

    init(_ query: MetadataQuery) {
        let finish = NotificationCenter.default.addObserver(
            forName: .NSMetadataQueryDidFinishGathering, object: query, queue: nil
        ) { [finished] _ in finished.signal() }
        let update = NotificationCenter.default.addObserver(
            forName: .NSMetadataQueryDidUpdate, object: query, queue: nil
        ) { [self] note in
            let time = monotonicNanoseconds()
            let added = (note.userInfo?[NSMetadataQueryUpdateAddedItemsKey] as? [NSMetadataItem])?.count ?? 0
            let removed =
                (note.userInfo?[NSMetadataQueryUpdateRemovedItemsKey] as? [NSMetadataItem])?.count ?? 0
            updates.withLock { $0.append((time, added, removed)) }
            updated.signal()
        }
        let kept = Observers(tokens: [finish, update])
        observers.withLock { $0 = kept }
    }

    deinit {
        for token in observers.withLock({ $0.tokens }) { NotificationCenter.default.removeObserver(token) }
    }
}

/// `query.gather.10000`: from `start()` to did-finish-gathering over 10,000 files, against a
/// bare `readdir` + `fstatat` of each in the same folder (the least any gathering costs).
func benchmarkQueryGather(items: Int, iterations: Int) throws -> BenchmarkRow {
    let folder = try scratchFolder("query-gather")
    defer { try? FileManager.default.removeItem(at: folder) }
    for index in 0..<items {
        let fd = open(
            folder.appendingPathComponent("document \(index).txt").path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644
        )
        if fd >= 0 { close(fd) }
    }
    var failed = false
    let medians = interleavedMedians(
        iterations,
        measured: {
            let query = MetadataQuery(searchScopes: [folder])
            let timer = QueryTimer(query)
            guard query.start(), timer.finished.wait(timeout: .now() + 30) == .success,
                query.resultCount == items
            else {
                failed = true
                return
            }
            query.stop()
        },
        floor: {
            guard let stream = opendir(folder.path) else { return }
            defer { closedir(stream) }
            var count = 0
            var info = stat()
            while let entry = readdir(stream) {
                let found = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                    raw.withMemoryRebound(to: CChar.self) {
                        fstatat(dirfd(stream), $0.baseAddress!, &info, AT_SYMLINK_NOFOLLOW) == 0
                    }
                }
                if found { count += 1 }
            }
            if count < items { failed = true }
        })
    if failed { throw CocoaError(.fileReadUnknown) }
    let ratio = medians.measured / medians.floor
    return BenchmarkRow(
        name: "query.gather.\(items)", unit: "ms", value: medians.measured * 1000,
        floor: medians.floor * 1000,
        floorDescription: "readdir + fstatat of each item (\(iterations) runs)", ratio: ratio,
        target: "within 2x", met: ratio <= 2)
}

/// `query.update.latency`: from a file created by another process (the child writer, which
/// reports the monotonic time its write finished) to the query's did-update listing it,
/// with the default `notificationBatchingInterval`, against bare inotify.
func benchmarkQueryUpdateLatency(samples: Int) throws -> [BenchmarkRow] {
    let folder = try scratchFolder("query-latency")
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("created.txt")
    let query = MetadataQuery(searchScopes: [folder])
    let timer = QueryTimer(query)
    guard query.start(), timer.finished.wait(timeout: .now() + 10) == .success else {
        throw query.lastError ?? CocoaError(.fileReadUnknown)
    }
    defer { query.stop() }
    let child = try startChildWriter(file.path)
    defer {
        kill(child.process.processIdentifier, SIGKILL)
        BenchmarkRun.wait(for: child.process)
    }
    var latencies: [Double] = []
    var early = 0
    for _ in 0..<samples {
        if FileManager.default.fileExists(atPath: file.path) {
            unlink(file.path)
            // Wait for the removal to be reported, so that the next update is the creation.
            while timer.updated.wait(timeout: .now() + 5) == .success {
                if timer.updates.withLock({ $0.last?.removed ?? 0 }) > 0 { break }
            }
            // A change within the batching interval of the last notification waits for the
            // interval to end by design; measure a creation that follows a quiet period.
            usleep(UInt32(query.notificationBatchingInterval * 1_000_000) + 20_000)
        }
        timer.updates.withLock { $0 = [] }
        let written = try child.write("u")
        let deadline = DispatchTime.now() + 5
        var heard: UInt64?
        while heard == nil, timer.updated.wait(timeout: deadline) == .success {
            heard = timer.updates.withLock { $0.first { $0.added > 0 }?.time }
        }
        // The item exists from the child's open(O_CREAT): a report before its write returns counts as 0.
        if let heard {
            if heard < written { early += 1 }
            latencies.append(heard >= written ? Double(heard - written) / 1e6 : 0)
        }
    }

    // The floor: inotify itself, for the same kind of write by the same child.
    let bare = folder.appendingPathComponent("bare", isDirectory: true)
    try FileManager.default.createDirectory(at: bare, withIntermediateDirectories: true)
    let bareChild = try startChildWriter(bare.appendingPathComponent("created.txt").path)
    defer {
        kill(bareChild.process.processIdentifier, SIGKILL)
        BenchmarkRun.wait(for: bareChild.process)
    }
    let inotify = inotify_init1(Int32(IN_CLOEXEC))
    defer { close(inotify) }
    _ = inotify_add_watch(inotify, bare.path, UInt32(IN_CREATE))
    var floors: [Double] = []
    var events = [UInt8](repeating: 0, count: 4096)
    for _ in 0..<samples {
        unlink(bare.appendingPathComponent("created.txt").path)
        let written = try bareChild.write("u")
        var pollDescriptor = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
        guard poll(&pollDescriptor, 1, 5000) == 1 else { continue }
        let heard = monotonicNanoseconds()
        _ = read(inotify, &events, events.count)
        // IN_CREATE comes before the write ends; the floor is at least zero.
        floors.append(heard >= written ? Double(heard - written) / 1e6 : 0)
    }
    guard !latencies.isEmpty, !floors.isEmpty else { throw CocoaError(.fileReadUnknown) }
    latencies.sort()
    floors.sort()
    let median = latencies[latencies.count / 2]
    let floor = floors[floors.count / 2]
    let interval = Int(query.notificationBatchingInterval * 1000)
    return [
        BenchmarkRow(
            name: "query.update.latency", unit: "ms", value: median, floor: floor,
            floorDescription:
                "bare inotify; \(latencies.count) samples (\(early) heard before the write returned), p90 \(String(format: "%.1f", latencies[latencies.count * 9 / 10])) ms, batching interval \(interval) ms",
            ratio: median / max(floor, 0.001), target: "median under 50 ms", met: median < 50)
    ]
}
