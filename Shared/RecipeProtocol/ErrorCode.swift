/// The closed set of error codes a reply can carry (docs/PROTOCOL.md lists each).
public enum ErrorCode: String, Codable, Sendable, CaseIterable {
    /// Frame 0 is not valid UTF-8 JSON.
    case malformedJSON = "malformed_json"
    /// Frame 0 nests objects/arrays deeper than the protocol allows.
    case nestingTooDeep = "nesting_too_deep"
    /// Frame 0 is JSON but not a request envelope (`v`, `id`, `op` missing or of the wrong type).
    case invalidEnvelope = "invalid_envelope"
    /// The request's `v` is not a protocol version this service speaks.
    case unsupportedVersion = "unsupported_version"
    /// The service has no operation of that name.
    case unknownOp = "unknown_op"
    /// The body is missing a field, has a field of the wrong type, or names a frame that is not there.
    case invalidBody = "invalid_body"
    /// The body is well-formed but a value is not allowed (out of range, empty, too long…).
    case invalidArgument = "invalid_argument"
    /// The record asked for does not exist.
    case notFound = "not_found"
    /// The record changed since the version the client last saw.
    case conflict = "conflict"
    /// The recipe is a starter (a read-only sample); duplicate it to change it.
    case starterReadOnly = "starter_read_only"
    /// An entry of an export from another app could not be read (damaged, or not what the app writes).
    case unreadableEntry = "unreadable_entry"
    /// A photo is larger than 2 MB.
    case photoTooLarge = "photo_too_large"
    /// The recipe already has the most photos allowed (10).
    case tooManyPhotos = "too_many_photos"
    /// The bytes are not a JPEG, PNG, WebP or HEIC image.
    case unsupportedImage = "unsupported_image"
    /// The photo says it is an image of a known format but does not decode (truncated, damaged).
    case unreadableImage = "unreadable_image"
    /// The web address is not an http:// or https:// address the worker may fetch.
    case unsupportedURL = "unsupported_url"
    /// The address resolves to a place that is not on the public internet (loopback, private, link-local…).
    case blockedAddress = "blocked_address"
    /// The site turned the request away (HTTP 403/429, a bot check or challenge page).
    case blockedBySite = "blocked_by_site"
    /// The page redirected more times than the worker follows (5).
    case tooManyRedirects = "too_many_redirects"
    /// The page is larger than the worker reads (10 MB by default).
    case pageTooLarge = "page_too_large"
    /// The site did not answer, or not fast enough, within the worker's time limits.
    case fetchTimeout = "fetch_timeout"
    /// The page could not be fetched: unknown host, refused connection, an HTTP error status.
    case fetchFailed = "fetch_failed"
    /// The page was read but holds no schema.org recipe.
    case noRecipeFound = "no_recipe_found"
    /// Replica sync: a record refers to a photo this replica does not hold yet (send the blob first).
    case missingPhoto = "missing_photo"
    /// Replica sync: a photo's bytes do not match the SHA-256 they were sent under.
    case photoDamaged = "photo_damaged"
    /// The message as a whole (all frames together, or their count) is over what the service reads.
    case messageTooLarge = "message_too_large"
    /// The request id was used before, by this client, with another body: a new request needs a new id.
    case requestIDReused = "request_id_reused"
    /// The client's key may not call this operation (`sync.*` belongs to replication peers).
    case forbidden = "forbidden"
    /// The service has as many requests in hand as it takes; retry in a moment.
    case busy = "busy"
    /// The service is shutting down and takes no new requests.
    case shuttingDown = "shutting_down"
    /// `sync.apply` refused a page read for another state of this replica (it was restored or started a new
    /// incarnation behind the same endpoint, or its cursor for the peer is behind the page): nothing was applied;
    /// start the sync again from this replica's id and cursor.
    case syncRestart = "sync_restart"
    /// A disk the service writes to is full (or the folder's quota is used up): the write was not done and nothing
    /// of it was kept. Free space there and retry.
    case storageFull = "storage_full"
    /// Another program holds the storage's database locked for writing (an SQLite shell or browser with unsaved
    /// changes, say) and did not let go within 5 seconds: the write was not done. Retry once it lets go.
    case storageLocked = "storage_locked"
    /// The storage's database file is damaged where the request needed it (SQLite found a malformed page): nothing
    /// was changed. Restore a backup into the data folder, or refill it from a replica.
    case storageDamaged = "storage_damaged"
    /// The service failed in a way the request could not cause; the message says what failed.
    case internalError = "internal_error"
}
