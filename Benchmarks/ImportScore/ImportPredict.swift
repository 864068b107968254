import Foundation
import RecipeImport

/// `import-predict GOLD OUT`: runs the importer over saved pages (`GOLD/<host>/<name>.html`)
/// and writes what a dry-run import returns (schema.org JSON) as `OUT/<host>/<name>.json`,
/// the input of shared/tools/import-score.py.
@main
enum ImportPredict {
    static func main() throws {
        let arguments = CommandLine.arguments
        if arguments.count == 3, arguments[1] == "--outline" {
            // What the heading reader sees on one page: a block per line, kind first.
            let html = String(decoding: try Data(contentsOf: URL(fileURLWithPath: arguments[2])), as: UTF8.self)
            for line in RecipeExtractor.outline(html: html) { print(line) }
            return
        }
        guard arguments.count == 3 else {
            FileHandle.standardError.write(Data("usage: import-predict GOLD_FOLDER OUTPUT_FOLDER | import-predict --outline PAGE.html\n".utf8))
            exit(64)
        }
        let gold = URL(fileURLWithPath: arguments[1]), output = URL(fileURLWithPath: arguments[2])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var pages = 0, found = 0
        for host in try FileManager.default.contentsOfDirectory(atPath: gold.path).sorted() {
            let folder = gold.appendingPathComponent(host)
            guard let files = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { continue }
            for file in files.sorted() where file.hasSuffix(".html") {
                pages += 1
                let html = String(decoding: try Data(contentsOf: folder.appendingPathComponent(file)), as: UTF8.self)
                guard let recipe = RecipeExtractor.extract(html: html, url: "https://\(host)/") else { continue }
                found += 1
                let destination = output.appendingPathComponent(host)
                try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
                try encoder.encode(recipe.schemaOrg)
                    .write(to: destination.appendingPathComponent(file.replacingOccurrences(of: ".html", with: ".json")))
            }
        }
        print("read a recipe from \(found) of \(pages) pages")
    }
}
