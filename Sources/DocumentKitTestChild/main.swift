import Foundation

// A real child process for the tests: crash, resource-limit, privilege and event-loop tests
// run it with a command name and arguments, and read its exit status and output.
let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    FileHandle.standardError.write(Data("usage: DocumentKitTestChild COMMAND [ARGUMENTS...]\n".utf8))
    exit(2)
}
let rest = Array(arguments.dropFirst())

if runChildCommand(command, rest) {
    exit(0)
}
FileHandle.standardError.write(Data("DocumentKitTestChild: unknown command \(command)\n".utf8))
exit(2)

/// Every command family the child knows; `as-nobody` dispatches through this too.
func runChildCommand(_ command: String, _ rest: [String]) -> Bool {
    runUndoCommand(command, rest) || runSaveCommand(command, rest) || runDocumentCommand(command, rest)
        || runChannelCommand(command, rest) || runLockCommand(command, rest)
        || runCoordinationCommand(command, rest)
        || runVersionCommand(command, rest) || runAdversaryCommand(command, rest)
        || runMemoryCommand(command, rest) || runUbiquityCommand(command, rest)
}
