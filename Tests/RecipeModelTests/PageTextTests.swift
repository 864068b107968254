import Foundation
import RecipeModel
import Testing
import TestThreads

@Suite("A page's bytes read in the encoding a browser would use", .onOwnThread)
struct PageTextTests {
    static let words = "Crème brûlée: 200 g crème fraîche, ½ vanilla pod"

    static func latin1(_ text: String) -> [UInt8] { [UInt8](text.data(using: .windowsCP1252)!) }
    static func page(head: String, body: String = words) -> String { "<html><head>\(head)<title>x</title></head><body><p>\(body)</p></body></html>" }

    @Test("a <meta> naming Latin-1 or Windows-1252, in either form, is followed", arguments: [
        #"<meta charset="iso-8859-1">"#, "<meta charset=windows-1252>", "<META CHARSET='ISO-8859-1'/>",
        #"<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">"#,
        #"<meta content="text/html;charset=latin1" http-equiv="content-type">"#,
    ])
    func metaDeclared(head: String) {
        #expect(PageText.decode(Self.latin1(Self.page(head: head))).contains(Self.words))
    }

    @Test("the Content-Type header comes before the <meta>; a byte order mark before both")
    func precedence() {
        let latin = Self.latin1(Self.page(head: #"<meta charset="utf-8">"#))
        #expect(PageText.decode(latin, contentType: "text/html; charset=ISO-8859-1").contains(Self.words))
        let utf8 = [UInt8](Self.page(head: #"<meta charset="iso-8859-1">"#).utf8)
        #expect(PageText.decode([0xEF, 0xBB, 0xBF] + utf8, contentType: "text/html; charset=iso-8859-1").contains(Self.words))
        #expect(PageText.decode([0xEF, 0xBB, 0xBF] + utf8).hasPrefix("<html>"), "the mark is not part of the text")
        let utf16 = [UInt8](Self.page(head: "").data(using: .utf16LittleEndian)!)
        #expect(PageText.decode([0xFF, 0xFE] + utf16).contains(Self.words))
    }

    @Test("undeclared: UTF-8 when the bytes read as UTF-8, Windows-1252 when they do not; a stray byte in UTF-8 stays one")
    func undeclared() {
        #expect(PageText.decode([UInt8](Self.page(head: "").utf8)) == Self.page(head: ""))
        #expect(PageText.decode(Self.latin1(Self.page(head: ""))).contains(Self.words))
        // Curly quotes and the euro sign are where Windows-1252 differs from Latin-1.
        #expect(PageText.decode(Self.latin1("“Tarte” 5 €")) == "“Tarte” 5 €")
        var stray = [UInt8](Self.page(head: "").utf8)
        stray.insert(0xFF, at: 30)
        let read = PageText.decode(stray)
        #expect(read.contains(Self.words) && read.contains("\u{FFFD}"))
        // Declared UTF-8 with a stray byte: UTF-8 all the same.
        var declared = [UInt8](Self.page(head: #"<meta charset="utf-8">"#).utf8)
        declared.append(0xE9)
        #expect(PageText.decode(declared).contains(Self.words))
    }

    @Test("other encodings a <meta> names (Japanese, Central European); a <meta> naming UTF-16 is UTF-8; an unknown label is passed over")
    func otherEncodings() {
        let japanese = "親子丼: 鶏もも肉 200 g"
        let sjis = [UInt8](Self.page(head: #"<meta charset="Shift_JIS">"#, body: japanese).data(using: .shiftJIS)!)
        #expect(PageText.decode(sjis).contains(japanese))
        let polish = "Żurek: 500 ml zakwasu, kiełbasa"
        let latin2 = [UInt8](Self.page(head: #"<meta charset="iso-8859-2">"#, body: polish).data(using: .isoLatin2)!)
        #expect(PageText.decode(latin2).contains(polish))
        #expect(PageText.decode([UInt8](Self.page(head: #"<meta charset="utf-16">"#).utf8)).contains(Self.words))
        #expect(PageText.decode(Self.latin1(Self.page(head: #"<meta charset="x-klingon">"#))).contains(Self.words))
    }

    @Test("a <meta> past the first 4 KB, or outside a tag, is not read; odd heads are answered, never a trap")
    func bounds() {
        let late = Self.latin1("<html><head>" + String(repeating: " ", count: 5_000) + #"<meta charset="utf-8">"# + "</head><p>\(Self.words)</p>")
        #expect(PageText.decode(late).contains(Self.words), "the late <meta> is not followed; the bytes show Windows-1252")
        #expect(PageText.decode(Self.latin1("<p>charset=utf-8</p><p>\(Self.words)</p>")).contains(Self.words))
        for head in ["<meta", "<meta charset", "<meta charset=", "<meta charset=\"", "<meta charset=>", "<meta charset = utf-8", "<metacharset=x>"] {
            _ = PageText.decode([UInt8](head.utf8))
        }
        #expect(PageText.decode([]) == "")
    }
}
