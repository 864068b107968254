import Foundation
import RecipeProtocol
import Testing
@testable import WorkerService

@Suite("Pages that give no recipe: the message says why")
struct NoRecipeTests {
    /// A page whose only schema.org data is a JSON-LD block of `ingredients` lines.
    private func page(ingredients: Int) throws -> String {
        let recipe: [String: Any] = ["@context": "https://schema.org", "@type": "Recipe", "name": "Big Soup",
                                     "recipeIngredient": Array(repeating: "1 leek, washed and sliced thin", count: ingredients),
                                     "recipeInstructions": ["Simmer."]]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: recipe), as: UTF8.self)
        return "<html><head><script type=\"application/ld+json\">\(json)</script></head><body><p>Big Soup</p></body></html>"
    }

    @Test("a recipe whose JSON-LD block is past the 2 MB read is said to be so, with its size (it was \"the page has no schema.org Recipe\"); a page without one keeps that message")
    func oversizedBlockSaid() throws {
        let large = try page(ingredients: 80_000)
        #expect(PageImporter.extract(large, contentType: "text/html", website: "https://soup.example/big") == nil)
        let error = PageImporter.noRecipe(large, contentType: "text/html", address: "https://soup.example/big")
        #expect(error.code == .noRecipeFound)
        #expect(error.message.contains("a JSON-LD block of 2.6 MB) is past the 2.0 MB the worker reads of one block"), "\(error.message)")

        let small = try page(ingredients: 3)
        #expect(PageImporter.extract(small, contentType: "text/html", website: "https://soup.example/small") != nil)
        let plain = PageImporter.noRecipe("<html><body><p>Nothing to cook here.</p></body></html>", contentType: "text/html",
                                          address: "https://soup.example/none")
        #expect(plain.message.contains("the page has no schema.org Recipe"), "\(plain.message)")
    }
}
