import Foundation

/// One row of the report: a measurement beside the floor or peer measured in the same run.
struct BenchmarkRow: Codable {
    var name: String
    /// What `value` and `floor` count, such as "ms" or "ops/s".
    var unit: String
    var value: Double
    var floor: Double
    /// What the floor is, in a few words.
    var floorDescription: String
    /// `value / floor`, or for rates `floor / value`, so that above 1 is always slower.
    var ratio: Double
    /// The bar the row must meet, in words, and whether it did.
    var target: String
    var met: Bool
}

/// The clock benchmarks read: monotonic, in seconds.
func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Runs `body` `count` times and returns the median duration in seconds.
func medianSeconds(_ count: Int, _ body: () throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    samples.reserveCapacity(count)
    for _ in 0..<count {
        let start = now()
        try body()
        samples.append(now() - start)
    }
    samples.sort()
    return samples[samples.count / 2]
}

/// Measures `measured` and `floor` interleaved, so that a noisy neighbour slows both alike,
/// and returns their median durations in seconds.
func interleavedMedians(
    _ count: Int, measured: () throws -> Void, floor: () throws -> Void
) rethrows -> (measured: Double, floor: Double) {
    var a: [Double] = []
    var b: [Double] = []
    for _ in 0..<count {
        var start = now()
        try measured()
        a.append(now() - start)
        start = now()
        try floor()
        b.append(now() - start)
    }
    a.sort()
    b.sort()
    return (a[a.count / 2], b[b.count / 2])
}

/// A scratch folder for one benchmark on the same file system as the user's files would be,
/// inside the run's own (`BenchmarkRun`), which the run removes however it ends.
func scratchFolder(_ name: String) throws -> URL {
    let url = try BenchmarkRun.scratchRoot().appendingPathComponent(name, isDirectory: true)
    try? FileManager.default.removeItem(at: url)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func printTable(_ rows: [BenchmarkRow]) {
    func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
    func format(_ value: Double) -> String {
        value >= 1000 ? String(format: "%.0f", value) : String(format: "%.3f", value)
    }
    print(pad("benchmark", 36) + pad("value", 16) + pad("floor", 16) + pad("ratio", 8) + "target")
    for row in rows {
        print(
            pad(row.name, 36) + pad("\(format(row.value)) \(row.unit)", 16)
                + pad("\(format(row.floor)) \(row.unit)", 16) + pad(String(format: "%.2fx", row.ratio), 8)
                + "\(row.met ? "ok" : "MISSED")  \(row.target)  [floor: \(row.floorDescription)]")
    }
}
