/// Commands shown for a person to run again: words a shell would split or read otherwise are quoted.
enum ShellWords {
    static func quoted(_ word: String) -> String {
        word.allSatisfy({ $0.isLetter || $0.isNumber || "-_=./:@+,".contains($0) }) && !word.isEmpty
            ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    static func command(_ words: [String]) -> String {
        (["recipes"] + words.map(quoted)).joined(separator: " ")
    }
}
