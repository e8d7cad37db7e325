import DocumentKit
import Foundation
import Synchronization

/// The child side of `presenter.notify.latency` and `presenter.save.latency`: on each line
/// from standard input it writes the file ("c" under coordination, "u" without) and prints the
/// monotonic time the write finished, which the parent compares with the time its presenter
/// heard of it; or ("w") writes under coordination and prints how long it waited for the
/// presenters to save before its accessor ran.
func runChildWriter(path: String) -> Never {
    let url = URL(fileURLWithPath: path)
    let coordinator = FileCoordinator(filePresenter: nil)
    var counter = 0
    while let line = readLine() {
        counter += 1
        let data = Data("write \(counter)\n".utf8)
        var written: UInt64 = 0
        do {
            if line == "w" {
                let asked = monotonicNanoseconds()
                try coordinator.coordinate(writingItemAt: url, options: .forReplacing) {
                    written = monotonicNanoseconds() - asked
                    try SafeSave.write(data, to: $0)
                }
            } else if line == "c" {
                try coordinator.coordinate(writingItemAt: url, options: .forReplacing) {
                    try SafeSave.write(data, to: $0)
                    // The write is done here; telling presenters is part of what is measured.
                    written = monotonicNanoseconds()
                }
            } else {
                try data.write(to: url)
                written = monotonicNanoseconds()
            }
        } catch {
            FileHandle.standardError.write(Data("docbench child: \(error)\n".utf8))
            exit(1)
        }
        FileHandle.standardOutput.write(Data("\(written)\n".utf8))
    }
    exit(0)
}

func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// A presenter that records when it hears of a change.
final class TimingPresenter: FilePresenter, Sendable {
    let presentedItemURL: URL?
    let presentedItemOperationQueue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()
    private let heard = Mutex<[UInt64]>([])
    let signal = DispatchSemaphore(value: 0)

    init(url: URL) { presentedItemURL = url }

    func presentedItemDidChange() {
        let now = monotonicNanoseconds()
        heard.withLock { $0.append(now) }
        signal.signal()
    }

    func takeTimes() -> [UInt64] {
        heard.withLock { times in
            defer { times = [] }
            return times
        }
    }
}

/// Runs the child writer and returns a function that asks it for one write and returns the
/// time the write finished.
func startChildWriter(_ path: String) throws -> (process: Process, write: (String) throws -> UInt64) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["--child-writer", path]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try BenchmarkRun.start(process)
    let reader = output.fileHandleForReading
    var buffer = Data()
    func write(_ mode: String) throws -> UInt64 {
        input.fileHandleForWriting.write(Data("\(mode)\n".utf8))
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                guard let time = UInt64(line) else { throw CocoaError(.fileReadCorruptFile) }
                return time
            }
            let chunk = reader.availableData
            if chunk.isEmpty { throw CocoaError(.fileReadUnknown) }
            buffer.append(chunk)
        }
    }
    return (process, write)
}

/// `presenter.notify.latency`: from a coordinated write in another process to this process's
/// presenter hearing `presentedItemDidChange`, against the bare inotify latency of an
/// uncoordinated write to the same folder (the least any notification can take).
func benchmarkPresenterLatency(samples: Int) throws -> [BenchmarkRow] {
    let folder = try scratchFolder("presenter-latency")
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("watched.txt")
    try SafeSave.write(Data("start\n".utf8), to: url)
    let presenter = TimingPresenter(url: url)
    FileCoordinator.addFilePresenter(presenter)
    defer { FileCoordinator.removeFilePresenter(presenter) }
    let child = try startChildWriter(url.path)
    defer {
        kill(child.process.processIdentifier, SIGKILL)
        BenchmarkRun.wait(for: child.process)
    }
    func measure(_ mode: String) throws -> [Double] {
        var latencies: [Double] = []
        for _ in 0..<samples {
            _ = presenter.takeTimes()
            let written = try child.write(mode)
            guard presenter.signal.wait(timeout: .now() + 5) == .success else { continue }
            // A wake-up left over from the previous sample is not this one.
            guard let heard = presenter.takeTimes().last, heard >= written else { continue }
            latencies.append(Double(heard - written) / 1e6)
            while presenter.signal.wait(timeout: .now() + .milliseconds(20)) == .success {}
        }
        return latencies.sorted()
    }
    let latencies = try measure("c")
    let uncoordinated = try measure("u")

    // The floor: inotify itself, for an uncoordinated write by the same child.
    let bareURL = folder.appendingPathComponent("bare", isDirectory: true)
    try FileManager.default.createDirectory(at: bareURL, withIntermediateDirectories: true)
    let bareChild = try startChildWriter(bareURL.appendingPathComponent("file.txt").path)
    defer {
        kill(bareChild.process.processIdentifier, SIGKILL)
        BenchmarkRun.wait(for: bareChild.process)
    }
    let inotify = inotify_init1(Int32(IN_CLOEXEC))
    defer { close(inotify) }
    _ = inotify_add_watch(inotify, bareURL.path, UInt32(IN_CLOSE_WRITE))
    var floors: [Double] = []
    var events = [UInt8](repeating: 0, count: 4096)
    for _ in 0..<samples {
        let written = try bareChild.write("u")
        var pollDescriptor = pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)
        guard poll(&pollDescriptor, 1, 5000) == 1 else { continue }
        let heard = monotonicNanoseconds()
        _ = read(inotify, &events, events.count)
        if heard >= written { floors.append(Double(heard - written) / 1e6) }
    }
    guard !latencies.isEmpty, !uncoordinated.isEmpty, !floors.isEmpty else {
        throw CocoaError(.fileReadUnknown)
    }
    floors.sort()
    let median = latencies[latencies.count / 2]
    let uncoordinatedMedian = uncoordinated[uncoordinated.count / 2]
    let floor = floors[floors.count / 2]
    return [
        BenchmarkRow(
            name: "presenter.notify.latency", unit: "ms", value: median, floor: floor,
            floorDescription: "bare inotify for an uncoordinated write (\(latencies.count) samples)",
            ratio: median / max(floor, 0.001), target: "median under 50 ms", met: median < 50),
        BenchmarkRow(
            name: "presenter.notify.latency.uncoordinated", unit: "ms", value: uncoordinatedMedian,
            floor: floor,
            floorDescription: "bare inotify (\(uncoordinated.count) samples)",
            ratio: uncoordinatedMedian / max(floor, 0.001), target: "median under 100 ms",
            met: uncoordinatedMedian < 100),
    ]
}

/// `presenter.save.latency`: another process's coordinated write to a file that an open
/// document holds dirty, while the main actor serves input (a key every 2 ms, each drawn for
/// half a millisecond): how long the writer waits until the document's
/// `savePresentedItemChanges` has saved and answered. Keys still arrive and are drawn while
/// the writer waits, but change nothing until it is done: text typed after the save would be
/// a conflict with the write, which is not what is measured. Beside it, the same write while
/// the document is clean (it answers without saving): the cost of asking at all.
@MainActor func benchmarkPresenterSaveLatency(samples: Int) async throws -> [BenchmarkRow] {
    let folder = try scratchFolder("presenter-save")
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("typed.txt")
    let document = BytesDocument(fileURL: url)
    document.versionStore = nil
    document.autosaveConfiguration.isEnabled = false
    document.bytes = Data("typed: ".utf8)
    guard await document.save(to: url, for: .forCreating) else { throw CocoaError(.fileWriteUnknown) }
    let child = try startChildWriter(url.path)
    defer {
        kill(child.process.processIdentifier, SIGKILL)
        BenchmarkRun.wait(for: child.process)
    }
    // The user typing: a key every 2 ms, each drawn for half a millisecond on the main actor.
    var typing = true
    var writerWaiting = false
    let keys = DispatchSource.makeTimerSource(queue: .main)
    keys.schedule(deadline: .now(), repeating: .milliseconds(2))
    keys.setEventHandler {
        MainActor.assumeIsolated {
            guard typing else { return }
            if !writerWaiting {
                document.bytes.append(UInt8(ascii: "x"))
                document.updateChangeCount(.done)
            }
            let drawn = monotonicNanoseconds() + 500_000
            while monotonicNanoseconds() < drawn {}
        }
    }
    keys.resume()
    defer { keys.cancel() }

    // Used by one sample at a time, from a global queue: the main actor must stay free for
    // the document to answer.
    nonisolated(unsafe) let write = child.write
    // The disk's part, measured beside each sample: a bare durable replace of the same bytes.
    let floorURL = folder.appendingPathComponent("floor.txt")
    var bareSaves: [Double] = []
    var writes = 0
    func waits(dirty: Bool) async throws -> [Double] {
        var result: [Double] = []
        for _ in 0..<samples {
            if dirty {
                let bytes = document.bytes
                let began = monotonicNanoseconds()
                try SafeSave.write(bytes, to: floorURL)
                bareSaves.append(Double(monotonicNanoseconds() - began) / 1e6)
            }
            // A few keys since the last save: the document has something to save.
            try await Task.sleep(for: .milliseconds(dirty ? 6 : 1))
            if !dirty { _ = await document.autosave() }
            writerWaiting = true
            let waited: UInt64 = try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(with: Result { try write("w") }) }
            }
            result.append(Double(waited) / 1e6)
            // The document takes the written file (it reloads) before typing goes on.
            writes += 1
            let written = Data("write \(writes)\n".utf8)
            while document.bytes != written { try await Task.sleep(for: .milliseconds(1)) }
            writerWaiting = false
        }
        return result.sorted()
    }
    let dirtyWaits = try await waits(dirty: true)
    typing = false
    let cleanWaits = try await waits(dirty: false)
    _ = await document.close()
    guard !dirtyWaits.isEmpty, !cleanWaits.isEmpty else { throw CocoaError(.fileReadUnknown) }
    func percentile(_ values: [Double], _ fraction: Double) -> Double {
        values[min(values.count - 1, Int((Double(values.count) * fraction).rounded(.up)) - 1)]
    }
    let median = percentile(dirtyWaits, 0.5)
    let p99 = percentile(dirtyWaits, 0.99)
    bareSaves.sort()
    // The floor: asking a clean document, plus saving the same bytes with nothing around it.
    let floorMedian = percentile(cleanWaits, 0.5) + percentile(bareSaves, 0.5)
    let floorP99 = percentile(cleanWaits, 0.99) + percentile(bareSaves, 0.99)
    return [
        BenchmarkRow(
            name: "presenter.save.latency.median", unit: "ms", value: median, floor: floorMedian,
            floorDescription:
                "asking a clean document + a bare write+fsync+rename of the same bytes (\(dirtyWaits.count) samples)",
            ratio: median / max(floorMedian, 0.001), target: "under 20 ms while typing", met: median < 20),
        BenchmarkRow(
            name: "presenter.save.latency.p99", unit: "ms", value: p99, floor: floorP99,
            floorDescription: "the same floor, p99 of each",
            ratio: p99 / max(floorP99, 0.001), target: "under 20 ms while typing", met: p99 < 20),
    ]
}
