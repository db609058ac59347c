import Foundation
import TernCache

/// One request kept by an `Outbox`: what it sends, where it stands, and how it ended.
/// Thread safety: a value type, safe to share.
public struct OutboxItem: Sendable, Hashable, Identifiable {
    /// An item's id: keep it beside your own record (a message, a like) to find its outcome,
    /// in this run or a later one.
    public struct ID: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The id's text (a UUID).
        public let rawValue: String
        /// An id from its text, as `rawValue` gave it.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The id's text.
        public var description: String { rawValue }
    }

    /// Where an item stands.
    public enum State: Sendable, Hashable {
        /// Waiting to be sent: for the network, for its turn in its ordering group, or for its
        /// next attempt after a failure that may pass.
        case queued
        /// On its way to the server now.
        case sending
        /// The server accepted it with a 2xx status; kept for `OutboxConfiguration.keepsDeliveredFor`.
        case delivered(statusCode: Int)
        /// It will not be sent again unless you `retry` it; kept until you `cancel` it.
        case failed(OutboxFailure)
    }

    /// The item's id.
    public let id: ID
    /// The request's method.
    public let method: HTTPMethod
    /// The request's URL, as it was built when the item was accepted.
    public let url: URL
    /// The ordering group: items of one group are sent one at a time, in the order accepted.
    public let orderingGroup: String?
    /// The `Idempotency-Key` every send of this item carries.
    public let idempotencyKey: String
    /// When the item was accepted (or retried: the age limit counts from there).
    public let enqueuedAt: Date
    /// Sends that ended so far, whatever their outcome.
    public let attempts: Int
    /// Where the item stands.
    public let state: State
    /// The last failure that did not end the item (a 503, a lost connection), for display.
    public let lastError: String?
    /// The body's size in bytes.
    public let bodySize: Int
    /// The final response's body: the delivered answer, or the rejecting one; nil before.
    public let responseBody: Data?
    /// When it was delivered or failed; nil before.
    public let finishedAt: Date?

    /// Whether the item is still to be sent (queued or sending).
    public var isPending: Bool {
        switch state {
        case .queued, .sending: true
        case .delivered, .failed: false
        }
    }
}

/// Why an outbox item failed for good.
/// Thread safety: a value type, safe to share.
public enum OutboxFailure: Sendable, Hashable, CustomStringConvertible {
    /// The server refused it with a 4xx status other than 408, 409, 425 and 429, which a later
    /// send would not change; `body` is its answer.
    case rejected(statusCode: Int, body: Data)
    /// It was not delivered within the outbox's `maximumAge`.
    case expired
    /// It can no longer be sent as stored: `reason` says why (a client hook refused it, a body
    /// file is gone).
    case unsendable(String)

    /// A one-line description.
    public var description: String {
        switch self {
        case .rejected(let code, _): "refused by the server with HTTP \(code)"
        case .expired: "not delivered before its age limit"
        case .unsendable(let reason): "cannot be sent: \(reason)"
        }
    }
}

/// What happened in an outbox, in order (`Outbox.events`, `OutboxDelegate`).
/// Thread safety: a value type, safe to share.
public enum OutboxEvent: Sendable {
    /// An item was accepted: it is on disk.
    case enqueued(OutboxItem)
    /// A send failed in a way that may pass (a 5xx, 408, 409, 425 or 429, a lost connection, a
    /// timeout); the item is sent again after `delay` seconds, or as soon as the network returns.
    case willRetry(OutboxItem, after: TimeInterval)
    /// The server accepted an item.
    case delivered(OutboxItem)
    /// An item failed for good; it is kept until you `cancel` or `retry` it.
    case failed(OutboxItem)
    /// An item was cancelled (removed).
    case removed(OutboxItem.ID)

    /// The item the event is about, where it carries one.
    public var item: OutboxItem? {
        switch self {
        case .enqueued(let item), .willRetry(let item, _), .delivered(let item), .failed(let item): item
        case .removed: nil
        }
    }
}

/// Why an outbox could not open, or refused a request.
/// Thread safety: a value type, safe to share.
public enum OutboxError: Error, Sendable, CustomStringConvertible {
    /// Accepting the request would pass a limit of the outbox's configuration; nothing was stored.
    case limitReached(Limit)
    /// The request cannot be built (its error says why); nothing was stored.
    case invalidRequest(TernError)
    /// The outbox's store failed: the request was not accepted (or the outbox could not open).
    case storage(CacheError)
    /// Another `Outbox` of this process has this directory open: one directory, one outbox, so
    /// that no item is sent twice at once.
    case directoryInUse(URL)
    /// The outbox was closed.
    case closed

    /// The limit `limitReached` names.
    public enum Limit: Sendable, Equatable {
        /// `maximumCount` items are waiting or failed.
        case count(Int)
        /// The bodies kept would pass `maximumBytes`.
        case bytes(Int64)
    }

    /// A one-line description.
    public var description: String {
        switch self {
        case .limitReached(.count(let limit)): "the outbox holds its limit of \(limit) items"
        case .limitReached(.bytes(let limit)): "the outbox's bodies would pass its limit of \(limit) bytes"
        case .invalidRequest(let error): "the request cannot be stored: \(error)"
        case .storage(let error): "the outbox's store failed: \(error)"
        case .directoryInUse(let url): "another outbox of this process has \(url.path) open"
        case .closed: "the outbox is closed"
        }
    }
}

/// Receives an outbox's events on its client's callback queue (the main queue by default).
/// Held weakly.
public protocol OutboxDelegate: AnyObject, Sendable {
    /// Something happened to an item (see `OutboxEvent`).
    func outbox(_ outbox: Outbox, didRecord event: OutboxEvent)
}
