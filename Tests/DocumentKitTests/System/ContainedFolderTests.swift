import CDocumentSystem
import Foundation
import Testing

@testable import DocumentKit

#if canImport(Glibc)
    import Glibc
#endif

/// Nothing done through a ``ContainedFolder`` reaches outside it: not by `..`, an absolute
/// path, a name holding "/" or NUL, a symbolic link inside pointing out, nor a link standing
/// for a parent folder. Each case runs with the kernel's `openat2` and with the walk older
/// kernels get.
@Suite struct ContainedFolderTests {
    static let resolutions: [ContainedFolder.Resolution] = [.automatic, .componentByComponent]

    /// A container and, beside it, an outside folder holding one file, with links to both.
    struct Fixture {
        let tree: TemporaryTree
        let container: URL
        let outside: URL

        init(_ name: String = #function) throws {
            tree = try TemporaryTree(name)
            container = tree.file("container")
            outside = tree.file("outside")
            try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
            try tree.write("victim", to: "outside/victim.txt")
            try tree.write("inside", to: "container/Notes/plan.txt")
            // A link inside that points out, one for a parent folder deeper down, and one for a file.
            try FileManager.default.createSymbolicLink(
                atPath: container.appendingPathComponent("link").path, withDestinationPath: outside.path)
            try FileManager.default.createSymbolicLink(
                atPath: container.appendingPathComponent("Notes/deeper").path,
                withDestinationPath: "../../outside")
            try FileManager.default.createSymbolicLink(
                atPath: container.appendingPathComponent("file-link").path,
                withDestinationPath: outside.appendingPathComponent("victim.txt").path)
        }

        /// The outside folder as it must stay: only the victim, unchanged.
        func expectOutsideUntouched(sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["victim.txt"],
                sourceLocation: sourceLocation)
            #expect(
                try String(contentsOf: outside.appendingPathComponent("victim.txt"), encoding: .utf8)
                    == "victim", sourceLocation: sourceLocation)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: tree.url.path).sorted()
                    == ["container", "outside"], sourceLocation: sourceLocation)
        }
    }

    /// Every way a caller can ask for an item, tried on `components`: each must throw.
    static func attempts(_ folder: ContainedFolder, _ components: [String]) -> [(String, () throws -> Void)] {
        [
            ("make folders", { _ = try folder.folder(components, creating: true, operation: "make") }),
            ("open the folder", { _ = try folder.folder(components, operation: "open") }),
            (
                "create",
                {
                    _ = try folder.open(
                        components, O_WRONLY | O_CREAT | O_EXCL, permissions: 0o600, operation: "create")
                }
            ),
            ("open to write", { _ = try folder.open(components, O_WRONLY | O_TRUNC, operation: "write") }),
            (
                "make its parents",
                { _ = try folder.parent(of: components, creating: true, operation: "make parents") }
            ),
            ("remove", { try folder.removeItem(components, operation: "remove") }),
            ("look", { _ = try folder.status(of: components, operation: "look at") }),
        ]
    }

    @Test(arguments: resolutions)
    func namesThatAreNotOneComponentAreRefusedBeforeAnySystemCall(_ resolution: ContainedFolder.Resolution)
        throws
    {
        let fixture = try Fixture()
        let folder = try ContainedFolder(at: fixture.container, resolution: resolution)
        let hostile: [[String]] = [
            [".."], ["..", "outside", "evil.txt"], ["Notes", "..", "..", "outside", "evil.txt"],
            ["x/../../outside/evil.txt"], [fixture.outside.appendingPathComponent("evil.txt").path],
            ["Notes", ""], ["."], ["evil\u{0}.txt"],
        ]
        for components in hostile {
            for (what, attempt) in Self.attempts(folder, components) {
                #expect(throws: DocumentKitError.self, "\(what) \(components)") { try attempt() }
                do {
                    try attempt()
                } catch let error as DocumentKitError {
                    #expect(error.code == .invalidArgument, "\(what) \(components): \(error)")
                    // The message names the operation and the path asked for.
                    #expect(error.description.contains("Could not \(error.operation)"))
                    #expect(
                        error.description.contains(components.joined(separator: "/"))
                            || components == ["evil\u{0}.txt"],
                        "\(error)")
                }
            }
        }
        try fixture.expectOutsideUntouched()
        #expect(FileManager.default.fileExists(atPath: fixture.tree.file("container/Notes/plan.txt").path))
        #expect(!FileManager.default.fileExists(atPath: fixture.tree.file("container/evil.txt").path))
    }

    @Test(arguments: resolutions)
    func aSymbolicLinkInsideIsNeverFollowedWhereverItPoints(_ resolution: ContainedFolder.Resolution) throws {
        let fixture = try Fixture()
        let folder = try ContainedFolder(at: fixture.container, resolution: resolution)
        for components in [
            ["link", "evil.txt"], ["link", "victim.txt"], ["link", "new", "evil.txt"],
            ["Notes", "deeper", "evil.txt"], ["Notes", "deeper", "victim.txt"], ["link"], ["file-link"],
        ] {
            for (what, attempt) in Self.attempts(folder, components) {
                if components.count == 1 {
                    switch what {
                    case "look":
                        // A look at the link itself sees the link, not what it points to.
                        #expect(
                            try folder.status(of: components, operation: "look at")?.isSymbolicLink == true)
                        continue
                    case "remove", "make its parents":
                        // The link itself, or its parent (the folder): inside, not tried here.
                        continue
                    default: break
                    }
                }
                do {
                    try attempt()
                    Issue.record("\(what) \(components) went through a link")
                } catch let error as DocumentKitError {
                    // Through a link on the way: refused as such. At the link itself, anything
                    // but following it (an exclusive create finds the name taken).
                    #expect(
                        components.count == 1 || error.code == .invalidSymbolicLink,
                        "\(what) \(components): \(error)")
                }
            }
        }
        try fixture.expectOutsideUntouched()
    }

    @Test func theKernelRefusesAnAbsolutePathDotDotAndALinkBeneathTheFolder() throws {
        let fixture = try Fixture()
        let root = try FileDescriptor.openDirectory(fixture.container, operation: "open")
        let outsideFile = fixture.outside.appendingPathComponent("evil.txt").path
        for path in [outsideFile, "../outside/evil.txt", "Notes/../../outside/evil.txt", "link/evil.txt"] {
            let opened = Syscall.openBeneath(root.rawValue, path, O_WRONLY | O_CREAT, 0o600)
            // A kernel before 5.6 lacks the call: the walk stands in (tested above).
            if case .failure(.notImplemented) = opened { continue }
            #expect(throws: Errno.self, "\(path)") { _ = try opened.get() }
        }
        try fixture.expectOutsideUntouched()
    }

    @Test(arguments: resolutions)
    func itemsInsideAreMadeMovedAndRemovedWithTheFoldersPermissions(_ resolution: ContainedFolder.Resolution)
        throws
    {
        let fixture = try Fixture()
        #expect(chmod(fixture.container.path, 0o700) == 0)
        let folder = try ContainedFolder(at: fixture.container, resolution: resolution)
        let mask = umask(0o022)
        umask(mask)
        #expect(folder.newFilePermissions == 0o600 & ~mask)
        let (parent, name) = try folder.parent(of: ["A", "B", "new.txt"], creating: true, operation: "make")
        #expect(parent.url.path == fixture.container.appendingPathComponent("A/B").path)
        let made = try #require(try folder.status(of: ["A", "B"], operation: "look"))
        #expect(made.isDirectory && made.permissions == 0o700 & ~mask)
        let file = try parent.open(
            name, O_WRONLY | O_CREAT | O_EXCL, permissions: folder.newFilePermissions, operation: "create")
        try Data("new".utf8).withUnsafeBytes { try file.writeAll($0) }
        #expect(try folder.status(of: ["A", "B", "new.txt"], operation: "look")?.size == 3)
        // A rename that would replace is refused; one to a free name goes.
        let notes = try folder.folder(["Notes"], operation: "open")
        #expect(throws: DocumentKitError.self) {
            try parent.moveItem(name, to: notes, as: "plan.txt", replacing: false, operation: "move")
        }
        try parent.moveItem(name, to: notes, as: "moved.txt", replacing: false, operation: "move")
        #expect(
            try String(contentsOf: fixture.tree.file("container/Notes/moved.txt"), encoding: .utf8) == "new")
        try folder.removeItem(["Notes", "moved.txt"], operation: "remove")
        try folder.removeItem(["A", "B"], folder: true, operation: "remove")
        #expect(try folder.status(of: ["A", "B"], operation: "look") == nil)
        #expect(try folder.status(of: ["A", "B", "gone.txt"], operation: "look") == nil)
        // The URL a coordinator hands back is taken apart again, only if inside.
        #expect(
            try folder.components(of: fixture.tree.file("container/Notes/plan.txt"), operation: "x") == [
                "Notes", "plan.txt",
            ])
        #expect(throws: DocumentKitError.self) {
            try folder.components(of: fixture.tree.file("container/../outside/victim.txt"), operation: "x")
        }
        try fixture.expectOutsideUntouched()
    }

    @Test func aFolderSetAsideIntoIsMadePrivate() throws {
        let tree = try TemporaryTree()
        let open = tree.file("share/App/Deleted")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: true)
        #expect(chmod(open.path, 0o755) == 0)
        try PrivateFolder.open(at: open, operation: "set aside")
        #expect(FileStatus(path: open.path)?.permissions == 0o700)
        let made = tree.file("new/Deleted")
        try PrivateFolder.open(at: made, operation: "set aside")
        #expect(FileStatus(path: made.path)?.permissions == 0o700)
        #expect(FileStatus(path: tree.file("new").path)?.permissions == 0o700)
    }
}
