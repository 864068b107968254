import Crypto
import Foundation
import Messaging
import PhotoProcessing
import RecipeModel
import RecipeProtocol

/// Where the worker makes photos fit before they travel on to storage: `recipes photo add`
/// and every import path come through here. Fitting is CPU work of up to a few hundred
/// milliseconds; it runs on a thread of its own, one photo at a time, so it holds up no
/// socket or request thread and the memory it takes is that of one photo. With a
/// `PhotoIntakeProcess` (as `recipe-worker` runs) the decoding itself happens in a helper
/// process under a memory limit, so a photo that crashes a decoder costs only that photo.
public struct PhotoDesk: Sendable {
    private let fitter: PhotoFitter
    private let process: PhotoIntakeProcess?
    let storage: MessageClientPool
    private let thread: ThreadExecutor

    public init(limits: PhotoFitter.Limits, storage: MessageClientPool, process: PhotoIntakeProcess? = nil) {
        self.fitter = PhotoFitter(limits: limits)
        self.process = process
        self.storage = storage
        self.thread = ThreadExecutor(name: "photo intake")
    }

    /// The photo made to fit, or the error saying why it cannot be.
    public func fit(_ bytes: Data, keepMetadata: Bool) async throws(ServiceError) -> PhotoFitter.Fitted {
        let (fitter, process) = (fitter, process)
        return try await withTaskExecutorPreference(thread) {
            Result { () throws(ServiceError) -> PhotoFitter.Fitted in
                if let process { return try process.fit(bytes, limits: fitter.limits, keepMetadata: keepMetadata) }
                return try fitter.fit(bytes, keepMetadata: keepMetadata)
            }
        }.get()
    }

    /// Fits the photo and adds it to the recipe in storage.
    public func add(_ bytes: Data, to recipeID: UUID, position: Int?, keepMetadata: Bool) async throws -> PhotoOps.Added {
        let fitted = try await fit(bytes, keepMetadata: keepMetadata)
        let added = try await storage.send(PhotoOps.Add.self, .init(recipeID: recipeID, position: position), frames: [fitted.bytes]).body
        return PhotoOps.Added(photos: added.photos, fitting: fitted.fitting)
    }
}

extension PhotoDesk {
    /// A photo's SHA-256 in hex, as recipe-storage names it (`PhotoInfo.sha256`): how a path finds a fitted
    /// photo the recipe already has.
    static func digest(_ bytes: Data) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }
}
