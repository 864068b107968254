import Foundation
import Messaging
import RecipeModel
import RecipeProtocol

/// How the CLI's photos reach storage: made to fit by recipe-worker's photo intake when the
/// worker is there (`photo.fit`), then stored into the storage the CLI was pointed at; as they
/// are with `--as-is`, or when no worker answers (storage's hard limits apply then).
struct PhotoSender {
    /// nil: photos go as they are.
    let worker: MessageClient?
    let keepMetadata: Bool
    /// Why photos go as they are although `--as-is` was not given.
    let note: String?

    /// The largest file sent to the worker (its default frame limit).
    static let maxInputBytes = WireProtocol.defaultMaxFrameBytes

    static func make(connection: ConnectionOptions, asIs: Bool, keepMetadata: Bool) async throws -> PhotoSender {
        if asIs { return PhotoSender(worker: nil, keepMetadata: false, note: nil) }
        let endpoint = connection.workerEndpoint
        guard EndpointProbe.accepts(endpoint) else {
            return PhotoSender(worker: nil, keepMetadata: false,
                note: "recipe-worker is not reachable at \(endpoint), so photos go to recipe-storage as they are, where the \(ImageKind.formatBytes(RecipeVault.maxPhotoBytes)) limit applies (start recipe-worker to have them fitted, or pass --as-is)")
        }
        // One try: a large HEIC takes the worker a second or two to fit, and a photo that takes it longer than its
        // --photo-timeout (60 s by default) is answered so at that point; the wait outlasts it, to hear why.
        return PhotoSender(worker: try connection.workerClient(attempts: 1, seconds: max(90, connection.timeout)),
                           keepMetadata: keepMetadata, note: nil)
    }

    /// The bytes to store for `file`, and what the worker did to them; throws what would be refused, naming the file.
    func prepare(_ bytes: Data, file: String) async throws -> (bytes: Data, fitting: PhotoFitting?) {
        guard let worker else {
            do { _ = try PhotoRules.check(bytes) } catch {
                throw CLIError("\(file): \(error.message)" + (note.map { "; \($0)" } ?? ""), status: ExitStatus.of(error.code))
            }
            return (bytes, nil)
        }
        guard bytes.count <= Self.maxInputBytes else {
            throw CLIError("\(file): the photo is \(ImageKind.formatBytes(bytes.count)); recipe-worker takes photos of up to \(ImageKind.formatBytes(Self.maxInputBytes)) to fit them")
        }
        do {
            let reply = try await worker.send(PhotoOps.Fit.self, .init(keepMetadata: keepMetadata ? true : nil), frames: [bytes])
            guard let fitted = reply.frames.first else { throw CLIError("\(file): recipe-worker sent the fitted photo without its bytes", status: ExitStatus.internalFailure) }
            return (fitted, reply.body.fitting)
        } catch let error as ServiceError {
            throw CLIError("\(file): \(error.message)", status: ExitStatus.of(error.code))
        }
    }
}
