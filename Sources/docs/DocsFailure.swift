import DocumentKit
import DocumentSync
import Foundation
import SimpleTextEditorDocument
import TextContainer

/// The exit statuses scripts can rely on.
enum ExitStatus: Int32 {
    case success = 0
    case failure = 1
    case usage = 2
}

/// A failure to report on standard error as one line starting with `docs: `, and the exit
/// status it ends the process with.
struct DocsFailure: Error, Equatable {
    var message: String
    var status: ExitStatus
    /// The subcommand whose usage to point at, for usage errors.
    var command: String?

    /// A command line that asks for something impossible: exit status 2.
    static func usage(_ message: String, command: String?) -> DocsFailure {
        DocsFailure(message: message, status: .usage, command: command)
    }

    /// A failure of what was asked: exit status 1.
    static func failure(_ message: String) -> DocsFailure {
        DocsFailure(message: message, status: .failure, command: nil)
    }

    /// A remote that could not be set up, for `command`: an address that cannot name a remote
    /// (not a URL, a scheme sync does not speak, a folder that is not there, a setting given
    /// for a remote it does not fit) is a usage error; what the remote or the computer
    /// answered (a server that refused the user, its certificate, or the probe's checks; a
    /// password file others can read; no answer) is a failure, whose message says what to do.
    static func of(_ error: RemoteSetupError, command: String) -> DocsFailure {
        error.kind == .invalidAddress ? usage(error.message, command: command) : failure(error.message)
    }

    /// A failure to `action` (“show”, “rename”) the document called `name`, worded from
    /// `error`: "cannot show “Notes”: no such document in /home/me/Documents/Simple Text Editor".
    ///
    /// A name that can never be a document's is a usage error; everything else is a failure.
    static func cannot(_ action: String, _ name: String, _ error: any Error) -> DocsFailure {
        let subject = "cannot \(action) “\(name)”"
        if let failure = error as? DocsFailure {
            return DocsFailure(
                message: "\(subject): \(failure.message)", status: failure.status, command: failure.command)
        }
        if let error = error as? DocumentKitError {
            let reason = reason(for: error)
            if error.code == .invalidArgument && error.operation == "name the document" {
                return .usage("\(subject): \(reason)", command: nil)
            }
            return .failure("\(subject): \(reason)")
        }
        if let error = error as? InvalidTextError {
            return .failure("\(subject): \(error.description)")
        }
        if let error = error as? ConflictMergeError {
            return .failure("\(subject): \(error.description)")
        }
        return .failure("\(subject): \(error.localizedDescription)")
    }

    /// The reason part of a DocumentKit error, naming the file when the error has one that
    /// the rest of the message does not already name.
    static func reason(for error: DocumentKitError) -> String {
        if let underlying = error.underlying as? InvalidTextError { return underlying.description }
        var text = error.detail ?? error.errno?.description ?? error.code.rawValue
        if error.detail != nil, let errno = error.errno, error.code != .fileNotFound,
            error.code != .fileExists
        {
            text += " (\(errno.description))"
        }
        if let url = error.url, !text.contains(url.deletingLastPathComponent().path) {
            text += " (\(url.path))"
        }
        return text
    }
}
