import ArgumentParser
import Foundation
import RecipeProtocol

/// `recipes`: the RecipeVault command line.
@main
struct Recipes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recipes",
        abstract: "Your RecipeVault recipes from the command line.",
        discussion: "Talks to recipe-storage (RECIPES_STORAGE, default \(RecipeVault.defaultStorageEndpoint)) and, to import from the web, recipe-worker (RECIPES_WORKER, default \(RecipeVault.defaultWorkerEndpoint)).",
        version: RecipeVault.version,
        subcommands: [
            ListRecipes.self, ShowRecipe.self, SearchRecipes.self, AddRecipe.self, EditRecipe.self, DeleteRecipe.self, DuplicateRecipe.self,
            FavoriteRecipe.self, RateRecipe.self, PhotoCommand.self, BooksCommand.self, IngredientsCommand.self,
            CanMake.self, Cooked.self, CookLog.self, ImportRecipes.self, Jobs.self, ExportRecipes.self, ImportFolder.self, Migrate.self, SyncCommand.self, ConflictsCommand.self, BackupCommand.self, Status.self, Check.self, Samples.self, KeysCommand.self,
        ]
    )

    static func main() async {
        let given = arguments(Array(CommandLine.arguments.dropFirst()))
        do {
            var command = try parseAsRoot(given)
            if var asyncCommand = command as? any AsyncParsableCommand { try await asyncCommand.run() } else { try command.run() }
        } catch {
            guard let hint = negativeNumberHint(given), exitCode(for: error) == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n" + hint + "\n").utf8))
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
    }

    /// A negative number given on its own (`recipes rate toast -1`) is read as an option, and the parser then says only
    /// "Missing expected argument '<rating>'". When the arguments were refused and hold one, this says what happened and
    /// how to give it, so that it meets the argument's own check ("the rating must be 0 (none) to 5").
    static func negativeNumberHint(_ arguments: [String]) -> String? {
        let options = arguments.prefix { $0 != "--" }
        guard let index = options.firstIndex(where: { $0.count > 1 && $0.hasPrefix("-") && Double($0) != nil }) else { return nil }
        let number = arguments[index]
        guard !arguments[(index + 1)...].contains(where: { $0.hasPrefix("-") }) else {
            return TerminalText.safe("recipes: \(number) was read as an option; to give it as a value, put -- before it, after every option")
        }
        let example = ShellWords.command(Array(arguments[..<index]) + ["--"] + arguments[index...])
        return TerminalText.safe("recipes: \(number) was read as an option; to give it as a value, put -- before it: \(example)")
    }

    /// The arguments as the parser should read them: a negative number after an option is that option's value
    /// (`--servings -3` is `--servings=-3`), so it meets the option's own range check ("from 0.01 to 10000") instead
    /// of being read as an unknown option and leaving the option without a value.
    static func arguments(_ given: [String]) -> [String] {
        var result: [String] = []
        for argument in given {
            if let option = result.last, option.hasPrefix("--"), option != "--", !option.contains("="), !result.contains("--"),
               argument.count > 1, argument.hasPrefix("-"), Double(argument) != nil {
                result[result.count - 1] = option + "=" + argument
            } else {
                result.append(argument)
            }
        }
        return result
    }
}
