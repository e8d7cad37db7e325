import Foundation
import Testing

@Suite struct TestChildTests {
    @Test func unknownCommandExitsWithUsageStatus() throws {
        let outcome = try TestChild.run(["no-such-command"])
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains("unknown command"))
    }
}
