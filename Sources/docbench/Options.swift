/// docbench's command line, parsed before anything runs.
///
/// Rules it enforces: every argument is a flag it knows, `--filter` takes a value that is not
/// a flag and that selects at least one benchmark; anything else is refused with exit status
/// 2 and nothing run, so that a mistyped flag never starts the whole suite (which takes most
/// of an hour).
struct Options {
    var json = false
    var quick = false
    var list = false
    var help = false
    /// `--filter` values: a benchmark runs when one of them matches it (all, when none).
    var filters: [String] = []

    /// A command line docbench refuses, with the reason.
    struct Refusal: Error {
        var reason: String
    }

    init(_ arguments: [String]) throws(Refusal) {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--json": json = true
            case "--quick": quick = true
            case "--list": list = true
            case "--help", "-h": help = true
            case "--filter":
                guard let value = rest.popFirst(), !value.hasPrefix("-"), !value.isEmpty else {
                    throw Refusal(reason: "--filter needs a NAME (a benchmark or a row, or part of one)")
                }
                filters.append(value)
            default:
                throw Refusal(
                    reason: argument.hasPrefix("-")
                        ? "unknown option \(argument)" : "unexpected argument \(argument) (use --filter NAME)"
                )
            }
        }
    }

    /// The benchmarks of `suite` the filters select, in the suite's order.
    func selected(from suite: [Benchmark]) throws(Refusal) -> [Benchmark] {
        for filter in filters where !suite.contains(where: { $0.matches(filter) }) {
            throw Refusal(reason: "no benchmark or row matches --filter \(filter)")
        }
        return filters.isEmpty
            ? suite : suite.filter { benchmark in filters.contains(where: benchmark.matches) }
    }

    /// What `--help` prints: the flags, then each benchmark with its rows.
    static func help(_ suite: [Benchmark]) -> String {
        var text = """
            usage: docbench [--quick] [--json] [--list] [--filter NAME]...
                   docbench --help

            Runs DocumentKit's benchmarks and prints each row beside its floor or peer, measured
            in the same run, the ratio (above 1 is slower) and whether it met its target.
            Run it in release mode: swift run -c release docbench (or scripts/bench).

              --filter NAME  run only the benchmarks whose name or a row's name contains NAME;
                             repeat it to run those any of the NAMEs select
              --quick        fewer samples (and sync.memory with a 256 MiB file): a check that
                             it all runs, noisier figures
              --json         the rows as JSON instead of a table
              --list         print the names of the rows that would run, and run nothing
              --help         this text

            Exit status: 0 when every benchmark ran (met or missed: see the table), 1 when one
            failed, 2 for a command line it does not know (nothing runs).
            Stopped by SIGTERM or SIGINT, it ends its child processes and removes its scratch
            folders before it ends.

            Environment:
              DOCBENCH_DIR   where scratch folders go (default .build/docbench; the same file
                             system as the documents you care about); each run makes one
                             folder of its own there and removes it

            Benchmarks (rows in brackets):

            """
        for benchmark in suite {
            text += "  \(benchmark.name)\n      \(benchmark.summary)\n"
            text += "      [\(benchmark.rows.joined(separator: ", "))]\n"
        }
        return text
    }
}
