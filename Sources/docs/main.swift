import Foundation

exit(await Docs.run(Array(CommandLine.arguments.dropFirst())))
