/// "/"-separated paths taken from other apps' exports (archive entry names, front-matter image fields), cut
/// up in plain Swift as `NSString`'s path methods cut them: trailing slashes dropped, runs of slashes read as one.
///
/// Not `NSString`: on Linux its path methods stop the process on some text (a fuzzed Chowdown export's
/// `image: …https://¡‡ž’ple.org/photo` did, in `lastPathComponent`, `deletingLastPathComponent`,
/// `pathExtension` and `deletingPathExtension` alike), and these names come from strangers' files.
enum PathText {
    /// The path with runs of slashes read as one and trailing slashes dropped ("/" stays "/").
    static func normalized(_ path: String) -> Substring {
        var out = ""
        out.reserveCapacity(path.utf8.count)
        var lastWasSlash = false
        for character in path {
            if character == "/" {
                if lastWasSlash { continue }
                lastWasSlash = true
            } else {
                lastWasSlash = false
            }
            out.append(character)
        }
        var trimmed = Substring(out)
        while trimmed.count > 1, trimmed.last == "/" { trimmed.removeLast() }
        return trimmed
    }

    /// The last component: "b.jpg" for "a/b.jpg", "/" for "/", "" for "".
    static func lastComponent(_ path: String) -> String {
        let path = normalized(path)
        if path == "/" { return "/" }
        guard let slash = path.lastIndex(of: "/") else { return String(path) }
        return String(path[path.index(after: slash)...])
    }

    /// The path without its last component: "a" for "a/b.jpg", "/" for "/a", "" for "a".
    static func deletingLastComponent(_ path: String) -> String {
        let path = normalized(path)
        guard let slash = path.lastIndex(of: "/") else { return "" }
        if path == "/" { return "/" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The path without the last component's extension: "a/b" for "a/b.jpg", "a" for "a."; a name that starts
    /// with its only dot (".hidden"), and "..", keep it.
    static func deletingExtension(_ path: String) -> String {
        let path = normalized(path)
        let nameStart = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let name = path[nameStart...]
        guard name != "..", let dot = name.lastIndex(of: "."), dot != name.startIndex else { return String(path) }
        return String(path[..<dot])
    }
}
