import DocumentKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a safe-save child command; returns false if `name` is not one.
func runSaveCommand(_ name: String, _ arguments: [String]) -> Bool {
    switch name {
    case "save":
        // save PATH TEXT: one safe save; exit 1 with the error on stderr.
        reportingErrors {
            try SafeSave.write(Data(arguments[1].utf8), to: URL(fileURLWithPath: arguments[0]))
        }
    case "read-wrapper":
        readWrapper(arguments[0])
    case "save-loop":
        saveLoop(URL(fileURLWithPath: arguments[0]), size: Int(arguments[1]) ?? 262_144)
    case "save-rlimit":
        saveUnderFileSizeLimit(
            URL(fileURLWithPath: arguments[0]), size: Int(arguments[1])!, limit: rlim_t(arguments[2])!)
    case "as-nobody":
        // as-nobody COMMAND ARGUMENTS...: drops root's privileges first, so permission tests
        // mean something when the tests run as root.
        guard setgroups(0, nil) == 0, setgid(65534) == 0, setuid(65534) == 0 else {
            fail("as-nobody: could not drop privileges: \(String(cString: strerror(errno)))")
        }
        let command = arguments[0]
        let rest = Array(arguments.dropFirst())
        if runChildCommand(command, rest) { exit(0) }
        fail("as-nobody: unknown command \(command)")
    default:
        return false
    }
    return true
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

func reportingErrors(_ body: () throws -> Void) {
    do { try body() } catch { fail("\(error)") }
}

/// A file's contents for generation `n`: a header naming the generation, then bytes that
/// depend on it, so a torn or mixed file is recognisable.
func generationContents(_ generation: Int, size: Int) -> Data {
    var data = Data("generation \(generation)\n".utf8)
    let fill = UInt8(truncatingIfNeeded: generation &* 31 &+ 7)
    data.append(Data(repeating: fill, count: max(0, size - data.count - 4)))
    data.append(Data("end\n".utf8))
    return data
}

/// Saves generation after generation until killed, printing "saved N" after each save
/// returns, straight to the file descriptor so nothing sits in a buffer at SIGKILL.
func saveLoop(_ url: URL, size: Int) -> Never {
    var generation = 0
    if let existing = try? Data(contentsOf: url),
        case let line = String(decoding: existing.prefix(while: { $0 != 10 }), as: UTF8.self),
        let number = Int(line.dropFirst("generation ".count))
    {
        generation = number
    }
    while true {
        generation += 1
        do {
            try SafeSave.write(generationContents(generation, size: size), to: url)
        } catch {
            fail("save-loop: \(error)")
        }
        let line = "saved \(generation)\n"
        _ = line.withCString { write(1, $0, strlen($0)) }
    }
}

func saveUnderFileSizeLimit(_ url: URL, size: Int, limit: rlim_t) -> Never {
    // Without this the kernel kills the process with SIGXFSZ instead of failing the write.
    signal(SIGXFSZ, SIG_IGN)
    var rlimit = rlimit(rlim_cur: limit, rlim_max: limit)
    guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &rlimit) == 0 else { fail("setrlimit failed") }
    do {
        try SafeSave.write(Data(repeating: 0x41, count: size), to: url)
    } catch {
        fail("\(error)")
    }
    exit(0)
}

/// Reads a file wrapper; used as `as-nobody read-wrapper PATH` to test permission errors as root.
func readWrapper(_ path: String) {
    reportingErrors { _ = try FileWrapper(url: URL(fileURLWithPath: path), options: .immediate) }
}
