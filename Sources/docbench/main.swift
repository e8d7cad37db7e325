import DocumentKit
import Foundation

// swift run -c release docbench [--json] [--quick] [--list] [--filter NAME]...; --help says
// more. Every row is measured beside its floor or peer in the same run; ratios above 1 are
// slower.
let arguments = Array(CommandLine.arguments.dropFirst())
// The children docbench spawns: a first argument a person would not type.
if arguments.first == "--child-writer", arguments.count == 2 {
    runChildWriter(path: arguments[1])
}
if arguments.first == "--sync-child" {
    runSyncChild(Array(arguments.dropFirst()))
}

let options: Options
let selected: [Benchmark]
do throws(Options.Refusal) {
    options = try Options(arguments)
    selected = try options.selected(from: catalog(quick: options.quick))
} catch {
    FileHandle.standardError.write(Data("docbench: \(error.reason); see docbench --help\n".utf8))
    exit(2)
}
if options.help {
    print(Options.help(catalog(quick: options.quick)), terminator: "")
    exit(0)
}
if options.list {
    for benchmark in selected {
        for row in benchmark.rows { print(row) }
    }
    exit(0)
}

let signalSources = BenchmarkRun.stopOnSignals()
var rows: [BenchmarkRow] = []
var failed = false
for benchmark in selected {
    do {
        rows.append(contentsOf: try await benchmark.run())
    } catch {
        FileHandle.standardError.write(Data("docbench: \(benchmark.name) failed: \(error)\n".utf8))
        failed = true
    }
}
BenchmarkRun.finish()
withExtendedLifetime(signalSources) {}
if options.json {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try encoder.encode(rows), as: UTF8.self))
} else {
    printTable(rows)
}
exit(failed ? 1 : 0)
