import Foundation
@testable import RecipeMigration
import TestThreads
import Testing

@Suite("Paths from strangers' exports, cut up without NSString", .onOwnThread)
struct PathTextTests {
    /// Random paths of non-empty components of dots and letters, with or without a leading slash: there NSString's
    /// path methods are the reference for the last component and the extension. (Not beyond: on Linux
    /// `("a/" as NSString).deletingLastPathComponent` stops the process, and `("//" as NSString).lastPathComponent`
    /// is empty; those cases are pinned below.)
    @Test("the same answers as NSString's path methods for 20,000 random paths of plain components")
    func sameAsNSString() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let alphabet: [Character] = [".", ".", "a", "b", "c", " ", "-", "é"]
        for _ in 0..<20_000 {
            let components = (0..<Int(1 + next() % 4)).map { _ in
                String((0..<Int(1 + next() % 5)).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] })
            }
            let path = (next() % 3 == 0 ? "/" : "") + components.joined(separator: "/")
            let ns = path as NSString
            #expect(PathText.lastComponent(path) == ns.lastPathComponent, "lastComponent of \"\(path)\"")
            // NSString's deletingLastPathComponent stops the process here on some of these ("a", "a/"): the components are the reference.
            let leading = path.hasPrefix("/") ? "/" : ""
            let parent = components.count == 1 ? (leading.isEmpty ? "" : "/") : leading + components.dropLast().joined(separator: "/")
            #expect(PathText.deletingLastComponent(path) == parent, "deletingLastComponent of \"\(path)\"")
            #expect(PathText.deletingExtension(path) == ns.deletingPathExtension, "deletingExtension of \"\(path)\"")
        }
    }

    @Test("trailing slashes are dropped and runs of slashes read as one")
    func slashes() {
        #expect(PathText.lastComponent("a/") == "a")
        #expect(PathText.deletingLastComponent("a/") == "")
        #expect(PathText.deletingLastComponent("a/b//") == "a")
        #expect(PathText.lastComponent("//") == "/" && PathText.lastComponent("/") == "/" && PathText.lastComponent("") == "")
        #expect(PathText.deletingLastComponent("/") == "/" && PathText.deletingLastComponent("/a") == "/")
        #expect(PathText.deletingLastComponent("a//b/c") == "a/b")
        #expect(PathText.deletingExtension("photos//cake.jpg/") == "photos/cake")
        #expect(PathText.deletingExtension(".hidden") == ".hidden" && PathText.deletingExtension("a.") == "a")
    }

    @Test("text NSString stops the process on is cut up like any other (found by fuzzing a Chowdown export)")
    func textThatStoppedNSString() {
        let path = "guacamole.jpgt: https://¡‡ž’ple.org/photo"
        #expect(PathText.lastComponent(path) == "photo")
        #expect(PathText.deletingLastComponent(path) == "guacamole.jpgt: https:/¡‡ž’ple.org")
        #expect(PathText.deletingExtension("https://¡‡ž’ple.org/photo.jpg") == "https:/¡‡ž’ple.org/photo")
        #expect(PathText.lastComponent("Crème brûlée//photos/tarte-tatin.jpg/") == "tarte-tatin.jpg")
    }
}
