import DocumentKit
import Foundation
import Synchronization
import TextContainer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Set by SIGINT or SIGTERM while `docs watch` runs.
let watchStopRequested = Atomic<Bool>(false)

/// `docs watch`: a line per change, written as it happens, until SIGINT or SIGTERM.
@MainActor
enum WatchCommand {
    static func run(_ container: TextContainer, json: Bool) async throws {
        let stop: @convention(c) (Int32) -> Void = { _ in watchStopRequested.store(true, ordering: .relaxed) }
        signal(SIGINT, stop)
        signal(SIGTERM, stop)
        do {
            try await QueryAdapter.watch(
                container, until: { watchStopRequested.load(ordering: .relaxed) },
                ready: { Output.error("docs: watching \(container.url.path)") },
                report: { changes in try Output.write(lines(for: changes, json: json)) })
        } catch let error as DocumentKitError {
            throw DocsFailure.failure("cannot watch the container: \(DocsFailure.reason(for: error))")
        }
    }

    /// The output for one batch: one line per change, written in one go.
    static func lines(for changes: [ContainerChange], json: Bool) -> [UInt8] {
        var writer = JSONWriter()
        for change in changes {
            if json {
                writer.raw("{")
                writer.field("event", change.kind.rawValue)
                writer.field("name", TextContainer.documentName(forFileName: change.fileName))
                writer.field("file", change.fileName)
                writer.key("size")
                if let entry = change.entry { writer.integer(entry.size) } else { writer.raw("null") }
                writer.key("modified")
                if let entry = change.entry {
                    writer.timestamp(
                        seconds: entry.modificationSeconds, nanoseconds: entry.modificationNanoseconds)
                } else {
                    writer.raw("null")
                }
                writer.raw("}")
            } else {
                writer.bytes.append(
                    contentsOf:
                        "\(change.kind.rawValue) \(Output.escaped(TextContainer.documentName(forFileName: change.fileName)))"
                        .utf8)
            }
            writer.newline()
        }
        return writer.bytes
    }
}
