import Foundation

/// Pages of about 10 MB built to make a careless HTML/JSON reader quadratic, deep or huge.
enum HostilePages {
    static let size = 10_000_000

    static let kinds = ["benign", "deep-nesting", "unmatched-tags", "many-itemscopes", "nested-itemprops",
                        "jsonld-deep", "jsonld-huge", "unclosed-scripts", "no-gt", "ingredient-headings", "open-headings", "inline-tags",
                        "numbered-headings", "unheaded-steps", "time-labels"]

    /// `unit` repeated after `head` until the page is `size` bytes.
    static func fill(_ head: String, _ unit: String, tail: String = "") -> String {
        let count = max(0, (size - head.utf8.count - tail.utf8.count) / unit.utf8.count)
        return head + String(repeating: unit, count: count) + tail
    }

    static let recipeHead = #"<html><body><div itemscope itemtype="http://schema.org/Recipe"><span itemprop="name">Hostile</span>"#

    /// The page of `kind`; `benign` is saved pages (from `folder`) one after another, the baseline.
    static func page(_ kind: String, benignFrom pages: [Data]) -> String? {
        switch kind {
        case "benign":
            var text = ""
            while text.utf8.count < size, !pages.isEmpty {
                for page in pages where text.utf8.count < size { text += String(decoding: page, as: UTF8.self) }
            }
            return text
        case "deep-nesting": return fill(recipeHead, "<div>")
        case "unmatched-tags": return fill(recipeHead, "</i>")
        case "many-itemscopes": return fill(recipeHead, #"<div itemprop="step" itemscope itemtype="http://schema.org/HowToStep"><span itemprop="text">Stir.</span></div>"#)
        case "nested-itemprops": return fill(recipeHead, #"<span itemprop="recipeIngredient">1 egg "#)
        case "jsonld-deep": return fill(#"<script type="application/ld+json">"#, "[", tail: "</script>")
        case "jsonld-huge": return fill(#"<script type="application/ld+json">{"@type":"Recipe","name":"Big","recipeIngredient":["#, #""1 egg","#, tail: #""x"]}</script>"#)
        case "unclosed-scripts": return fill(recipeHead, "<script>x")
        case "no-gt": return fill(recipeHead, "<a itemprop=\"x\" ")
        // For the heading reader (pages without schema.org): every heading a candidate, headings never closed, tags in text.
        case "ingredient-headings": return fill("<html><body><h1>Soup</h1>", "<h2>Ingredients</h2><ul><li>1 egg</li></ul><h3>Zutaten für 4</h3>")
        case "open-headings": return fill("<html><body><h1>Soup", "<h2>Ingredients<li>1 egg")
        // Every heading a step number, each candidate ingredients list followed by them; sentences with no end; a page
        // of time and yield labels over a recipe that gives none.
        case "numbered-headings": return fill("<html><body><h1>Soup</h1><h2>Ingredients</h2><ul><li>1 egg</li><li>2 eggs</li></ul>",
                                              "<h3>1. Stir the soup well</h3><p>Stir it.</p><h2>Ingredients</h2><li>a</li><li>b</li>")
        case "unheaded-steps": return fill("<html><body><h1>Soup</h1><p>Ingredients</p><ul><li>1 egg</li><li>2 eggs</li></ul>",
                                           "<p>Stir the soup until it is smooth and hot.</p>")
        case "time-labels": return fill(recipeHead, "<p>Prep Time:</p><p>5</p><p>Serves: x | Cook Time: y | Total Time</p>")
        case "inline-tags": return fill(#"<html><body><h1>Soup</h1><h2>Ingredients</h2><ul><li>1 egg</li><li>2 eggs</li></ul><h2>Method</h2><p>"#, "<b>a</b><i>")
        default: return nil
        }
    }
}
