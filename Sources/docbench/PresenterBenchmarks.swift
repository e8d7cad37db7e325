import DocumentKit
import Foundation
import Synchronization

/// The child side of `presenter.notify.latency`: on each line from standard input it writes
/// the file ("c" under coordination, "u" without) and prints the monotonic time the write
/// finished, which the parent compares with the time its presenter heard of it.
func runChildWriter(path: String) -> Never {
    let url = URL(fileURLWithPath: path)
    let coordinator = FileCoordinator(filePresenter: nil)
    var counter = 0
    while let line = readLine() {
        counter += 1
        let data = Data("write \(counter)\n".utf8)
        var written: UInt64 = 0
        do {
            if line == "c" {
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
    try process.run()
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
        child.process.waitUntilExit()
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
        bareChild.process.waitUntilExit()
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
