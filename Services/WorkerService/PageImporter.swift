import Foundation
import Logging
import Messaging
import PhotoProcessing
import RecipeImport
import RecipeModel
import RecipeProtocol
import WebFetch

/// Turns a web page into a stored recipe: fetch (guarded), extract, store
/// through recipe-storage (same page → same recipe), then take the page's main
/// image in as the first photo, made to fit the photo rules by the photo intake.
public struct PageImporter: Sendable {
    let fetcher: GuardedFetcher
    let storage: MessageClientPool
    let photos: PhotoDesk
    let logger: Logger
    /// Pages are read here, one at a time: reading is CPU work that must hold up neither
    /// the socket's thread nor the request handlers, and one page at a time bounds the memory it takes.
    let extraction: ThreadExecutor

    public init(fetcher: GuardedFetcher, storage: MessageClientPool, photos: PhotoDesk, logger: Logger) {
        self.fetcher = fetcher
        self.storage = storage
        self.photos = photos
        self.logger = logger
        self.extraction = ThreadExecutor(name: "page extraction")
    }

    /// Fetches `address` and imports the recipe on it.
    public func importURL(_ address: String, dryRun: Bool, id: UUID?) async throws -> ImportResult {
        let requested = try GuardedFetcher.parse(address).url
        let page = try await fetcher.fetch(address, for: .page)
        return try await importPage(body: page.text, contentType: page.contentType, pageURL: page.url,
                                    sameAs: [requested], dryRun: dryRun, id: id)
    }

    /// Imports a page the user saved; `address` is where it came from (it is not fetched).
    public func importHTML(_ html: String, address: String, dryRun: Bool, id: UUID?) async throws -> ImportResult {
        let pageURL = try GuardedFetcher.parse(address).url
        let limit = fetcher.policy.maxPageBytes
        guard html.utf8.count <= limit else {
            throw ServiceError(.pageTooLarge, "the saved page is \(html.utf8.count) bytes; the worker reads pages of at most \(limit) bytes (recipe-worker --max-page-bytes)")
        }
        return try await importPage(body: html, contentType: nil, pageURL: pageURL, sameAs: [], dryRun: dryRun, id: id)
    }

    private func importPage(body: String, contentType: String?, pageURL: URL, sameAs: [URL], dryRun: Bool,
                            id: UUID?) async throws -> ImportResult {
        let website = Self.canonical(pageURL)
        let found = await withTaskExecutorPreference(extraction) { Self.extract(body, contentType: contentType, website: website) }
        guard var imported = found else {
            throw Self.noRecipe(body, contentType: contentType, address: pageURL.absoluteString)
        }
        imported.images = imported.images.compactMap { URL(string: $0, relativeTo: pageURL)?.absoluteURL.absoluteString }
        imported.draft.website = website
        imported.draft.sourceType = .url
        imported.draft.origin = .imported
        let leftOut = imported.leftOut.isEmpty ? nil : imported.leftOut
        let unstructured: Bool? = imported.readWithoutStructuredData ? true : nil
        if dryRun {
            return ImportResult(outcome: .dryRun, recipe: nil, schemaOrg: imported.schemaOrg, source: website,
                                photo: PhotoIntake(added: false, source: imported.images.first, note: "a dry run stores nothing"),
                                leftOut: leftOut, readWithoutStructuredData: unstructured)
        }
        let saved = try await storage.call(RecipeOps.SaveImported.self, .init(
            id: id ?? UUID.timeOrdered(), recipe: imported.draft,
            sameAs: Array(Set([website, pageURL.absoluteString] + sameAs.flatMap { [Self.canonical($0), $0.absoluteString] }))
                .filter { $0.count <= RecipeDraft.Limits.lineLength }))
        logger.info("recipe imported", metadata: [
            "recipe": "\(saved.recipe.id)", "outcome": "\(saved.outcome.rawValue)", "source": "\(website)",
        ])
        let (photo, photos) = await intake(imported.images, into: saved.recipe)
        let recipe = await recipe(saved.recipe, withPhotos: photos)
        return ImportResult(outcome: saved.outcome, recipe: recipe, schemaOrg: nil, source: website, photo: photo, leftOut: leftOut,
                            readWithoutStructuredData: unstructured)
    }

    /// The recipe as stored once its photo was added (`photos`, nil when none was): read back, for the version and
    /// time the photo gave it. The import is done by then, so a read back that fails (the storage busy, stopping, or
    /// the recipe deleted meanwhile) never makes it a failed import: the reply is the recipe as saved, with the
    /// photos the storage said it has.
    private func recipe(_ saved: Recipe, withPhotos photos: [PhotoInfo]?) async -> Recipe {
        guard let photos else { return saved }
        do {
            return try await storage.call(RecipeOps.Get.self, .init(id: saved.id)).recipe
        } catch {
            logger.warning("recipe imported with its photo, but not read back", metadata: ["recipe": "\(saved.id)", "error": "\(error)"])
            var recipe = saved
            recipe.photos = photos
            return recipe
        }
    }

    // MARK: Reading the page

    static func extract(_ body: String, contentType: String?, website: String) -> ImportedRecipe? {
        if let contentType, contentType.lowercased().contains("json"), body.utf8.count <= 2_000_000,
           let json = try? JSONSerialization.jsonObject(with: Data(body.utf8), options: [.fragmentsAllowed]) {
            return RecipeExtractor.extract(json: json, url: website)
        }
        return RecipeExtractor.extract(html: body, url: website)
    }

    /// The error for a page without a recipe: a bot check, a file that is not a page, or a page without schema.org data.
    static func noRecipe(_ body: String, contentType: String?, address: String) -> ServiceError {
        if GuardedFetcher.looksLikeChallenge(Array(body.utf8.prefix(64 * 1024))) {
            return ServiceError(.blockedBySite,
                "\(address) answered with a bot check instead of the page; open it in a browser, save the page and import it with --html FILE --url URL")
        }
        if let contentType, let kind = contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased(),
           !(kind.contains("html") || kind.contains("xml") || kind.contains("json") || kind.hasPrefix("text/")) {
            return ServiceError(.noRecipeFound, "\(address) is \(kind), not a web page; give the address of the recipe's page")
        }
        let unread = RecipeExtractor.unreadJSONLDSizes(in: body)
        if let largest = unread.max() {
            let megabytes = { (bytes: Int) in String(format: "%.1f MB", Double(bytes) / 1_000_000) }
            return ServiceError(.noRecipeFound,
                "no recipe found on \(address): its schema.org data (a JSON-LD block of \(megabytes(largest))\(unread.count > 1 ? ", and \(unread.count - 1) more past the limit" : "")) is past the \(megabytes(RecipeExtractor.maxJSONLDBytes)) the worker reads of one block (a recipe's is tens of kilobytes); the page has no microdata recipe either, nor ingredients and method headings with lists under them. Add the recipe with `recipes add`")
        }
        return ServiceError(.noRecipeFound,
            "no recipe found on \(address): the page has no schema.org Recipe (JSON-LD or microdata), and no ingredients and method headings with lists under them. If it shows a recipe in a browser, the site may build it with scripts: save the page and try --html, or add the recipe with `recipes add`")
    }

    /// The address a recipe keeps as its `website`: no fragment, no tracking
    /// parameters, host in lower case — so the same page is always the same recipe.
    public static func canonical(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url.absoluteString }
        components.fragment = nil
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        let tracking: Set<String> = ["fbclid", "gclid", "mc_cid", "mc_eid", "igshid", "ref", "ref_src"]
        let kept = components.queryItems?.filter { !$0.name.lowercased().hasPrefix("utm_") && !tracking.contains($0.name.lowercased()) }
        components.queryItems = kept?.isEmpty == true ? nil : kept
        return components.url?.absoluteString ?? url.absoluteString
    }

    // MARK: Photo intake

    /// Adds the page's main image as the recipe's first photo, made to fit the photo rules,
    /// when it is a real image and the recipe has room; otherwise says why not. With the recipe's photos once one
    /// was added.
    func intake(_ candidates: [String], into recipe: Recipe) async -> (PhotoIntake, [PhotoInfo]?) {
        guard let first = candidates.first else { return (PhotoIntake(added: false, note: "the page names no image"), nil) }
        guard recipe.photos.count < RecipeVault.maxPhotosPerRecipe else {
            return (PhotoIntake(added: false, source: first,
                note: "the recipe already has \(recipe.photos.count) photos, the most allowed (\(RecipeVault.maxPhotosPerRecipe)), so the page's image was not added"), nil)
        }
        var notes: [String] = []
        var unreachableHosts = Set<String>()
        for candidate in candidates.prefix(3) {
            // Other sizes of the same image live on the same host: one failed lookup or connection is enough.
            let host = URL(string: candidate)?.host ?? candidate
            if unreachableHosts.contains(host) { continue }
            let bytes: Data
            do {
                bytes = Data(try await fetcher.fetch(candidate, for: .image).body)
            } catch let error as ServiceError {
                if [.fetchFailed, .fetchTimeout, .blockedAddress, .blockedBySite].contains(error.code) { unreachableHosts.insert(host) }
                notes.append(error.code == .pageTooLarge
                    ? "the image at \(candidate) is larger than \(ImageKind.formatBytes(fetcher.policy.maxImageBytes)), the most the worker takes in to fit"
                    : "the image at \(candidate) could not be fetched (\(error.message))")
                continue
            } catch {
                notes.append("the image at \(candidate) could not be fetched (\(error))")
                continue
            }
            let fitted: PhotoFitter.Fitted
            do {
                fitted = try await photos.fit(bytes, keepMetadata: false)
            } catch {
                notes.append("the image at \(candidate) was skipped: \(error.message)")
                continue
            }
            // The intake is deterministic: the same image fits to the same bytes, so a second import finds it.
            let digest = PhotoDesk.digest(fitted.bytes)
            if recipe.photos.contains(where: { $0.sha256 == digest }) {
                return (PhotoIntake(added: false, source: candidate, note: "the page's image is already one of the recipe's photos"), nil)
            }
            do {
                let added = try await storage.send(PhotoOps.Add.self, .init(recipeID: recipe.id, position: 0), frames: [fitted.bytes])
                return (PhotoIntake(added: true, source: candidate, fitting: fitted.fitting), added.body.photos)
            } catch let error as ServiceError {
                notes.append("recipe-storage did not keep the image at \(candidate): \(error.message)")
            } catch {
                notes.append("the image at \(candidate) could not be stored (\(error))")
            }
        }
        return (PhotoIntake(added: false, source: first, note: notes.joined(separator: "; ") + "; the recipe was imported without it"), nil)
    }
}
