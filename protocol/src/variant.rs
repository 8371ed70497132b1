//! The traits every generated request and response type implements: the op table the clients dispatch on.
//!
//! `codegen` writes one struct per variant of [`Request`] and [`Response`] (`CreatePtyRequest`,
//! `SnapshotResponse`, ...) with the variant's members, converting to the enum with `From` and back with
//! `TryFrom` (which hands back the other variant on a mismatch). Through these traits a client sends any request
//! and receives the type the schema says answers it (`x-answer`), so a new op needs no client code to be usable.

use crate::generated::{Request, Response};

/// One request op as a type of its own.
pub trait RequestVariant: Into<Request> + TryFrom<Request, Error = Request> {
    /// The `op` tag, as on the wire.
    const OP: &'static str;
    /// The response that answers it (`x-answer`); an `error` may answer any request instead.
    type Answer: ResponseVariant;
}

/// One response or event type as a type of its own.
pub trait ResponseVariant: Into<Response> + TryFrom<Response, Error = Response> {
    /// The `type` tag, as on the wire.
    const TYPE: &'static str;
    /// Whether a subscription carries it after `attached` (`x-event`).
    const EVENT: bool;
}
