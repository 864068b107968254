import RecipeModel
/// Text for a terminal, whatever a recipe holds. A name or step may come from any web page or client, and control
/// characters in it would be obeyed by the terminal, not shown: ESC sequences can clear the screen, rewrite what was
/// printed, set the window title or (OSC 52) write the clipboard; a carriage return overprints a line. Each such
/// character is shown as its symbol instead (␛, ␇, ␍; U+FFFD for the C1 controls). Line breaks and tabs stay, and so do
/// the three colour sequences `Output.bold` and `Output.dim` write.
enum TerminalText {
    static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: \.isTerminalControl) else { return text }
        var result = String.UnicodeScalarView()
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\u{1B}", let length = colourSequence(scalars, at: index) {
                result.append(contentsOf: scalars[index..<(index + length)])
                index += length
                continue
            }
            if scalar.isTerminalControl {
                switch scalar.value {
                case 0x00...0x1F: result.append(Unicode.Scalar(0x2400 + scalar.value)!) // ␀…␟
                case 0x7F: result.append("\u{2421}") // ␡
                default: result.append("\u{FFFD}")
                }
            } else {
                result.append(scalar)
            }
            index += 1
        }
        return String(result)
    }

    /// The length of ESC [ 0 m, ESC [ 1 m or ESC [ 2 m at `index` (the only sequences the CLI writes itself), or nil.
    private static func colourSequence(_ scalars: [Unicode.Scalar], at index: Int) -> Int? {
        guard index + 3 < scalars.count, scalars[index + 1] == "[", ["0", "1", "2"].contains(scalars[index + 2]), scalars[index + 3] == "m" else {
            return nil
        }
        return 4
    }
}

/// Every line the CLI prints for a person goes through `TerminalText.safe` (this shadows `Swift.print` in the module,
/// so no call site can forget it). `--json` output is written apart, already escaped by the encoder.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    Swift.print(TerminalText.safe(items.map { "\($0)" }.joined(separator: separator)), terminator: terminator)
}
