//! Two-step decoding of a request envelope `{"token": ..., "request": {...}}`.
//!
//! Step one ([`RequestEnvelope::from_frame`]) only finds the token, so a server authenticates before it
//! looks at anything else. Step two ([`RequestEnvelope::decode`]) reads `op` and then the fields, so an
//! unknown op and bad fields give different, exact errors: `unsupported request: <op>` and
//! `invalid <op> request: <detail>`. A client can therefore probe whether a daemon knows a request.

use serde_json::{Map, Value};

use crate::generated::{REQUEST_OPS, Request};

/// Why a request envelope could not be decoded. The `Display` text is what a server answers in `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The envelope has no string `token`: answered like a wrong token (SPEC E3).
    #[error("authentication failed")]
    MissingToken,
    /// The envelope has no `request` object, or the request has no string `op`.
    #[error("invalid request: {0}")]
    Malformed(&'static str),
    /// The request's `op` is not one this protocol version knows.
    #[error("unsupported request: {op}")]
    Unsupported {
        /// The op as sent.
        op: String,
    },
    /// The `op` is known but the fields do not fit it.
    #[error("invalid {op} request: {detail}")]
    Invalid {
        /// The op.
        op: String,
        /// What is wrong, from the decoder.
        detail: String,
    },
}

/// An envelope whose token has been found but whose request is not decoded yet.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestEnvelope {
    /// The credential the client sent; compare it (in constant time) before calling [`Self::decode`].
    pub token: String,
    request: Option<Value>,
}

impl RequestEnvelope {
    /// Takes the token out of a control frame's JSON object. Fails only when there is no string token.
    pub fn from_frame(mut frame: Map<String, Value>) -> Result<RequestEnvelope, RequestError> {
        let Some(Value::String(token)) = frame.remove("token") else {
            return Err(RequestError::MissingToken);
        };
        Ok(RequestEnvelope { token, request: frame.remove("request") })
    }

    /// The request's `op`, if the request is an object with a string `op`.
    pub fn op(&self) -> Option<&str> {
        self.request.as_ref()?.get("op")?.as_str()
    }

    /// Decodes the request: first its `op`, then its fields.
    pub fn decode(self) -> Result<Request, RequestError> {
        let request = match self.request {
            Some(request @ Value::Object(_)) => request,
            Some(_) => return Err(RequestError::Malformed("`request` must be an object")),
            None => return Err(RequestError::Malformed("the envelope needs a `request` object")),
        };
        let op = match request.get("op") {
            Some(Value::String(op)) => op.clone(),
            Some(_) => return Err(RequestError::Malformed("`op` must be a string")),
            None => return Err(RequestError::Malformed("the request needs an `op`")),
        };
        if !REQUEST_OPS.contains(&op.as_str()) {
            return Err(RequestError::Unsupported { op });
        }
        serde_json::from_value(request).map_err(|error| RequestError::Invalid { op, detail: error.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn envelope(value: Value) -> RequestEnvelope {
        let Value::Object(map) = value else { panic!("test envelopes are objects") };
        RequestEnvelope::from_frame(map).expect("token")
    }

    #[test]
    fn the_token_is_read_before_the_request() {
        let parsed = envelope(json!({"token": "abc", "request": {"op": "no such op"}}));
        assert_eq!(parsed.token, "abc");
        assert_eq!(parsed.op(), Some("no such op"));
        let Value::Object(map) = json!({"request": {"op": "ping"}}) else { unreachable!() };
        assert_eq!(RequestEnvelope::from_frame(map), Err(RequestError::MissingToken));
        let Value::Object(map) = json!({"token": 7, "request": {"op": "ping"}}) else { unreachable!() };
        let error = RequestEnvelope::from_frame(map).unwrap_err();
        assert_eq!(error, RequestError::MissingToken);
        assert_eq!(error.to_string(), "authentication failed", "clients re-read the registration on this text");
    }

    #[test]
    fn an_unknown_op_is_unsupported() {
        let error = envelope(json!({"token": "t", "request": {"op": "teleport", "id": 1}})).decode().unwrap_err();
        assert_eq!(error.to_string(), "unsupported request: teleport");
    }

    #[test]
    fn bad_fields_name_the_op() {
        let error = envelope(json!({"token": "t", "request": {"op": "get", "id": "seven"}})).decode().unwrap_err();
        assert_eq!(error.to_string(), "invalid get request: invalid type: string \"seven\", expected u64");
        let error = envelope(json!({"token": "t", "request": {"op": "get"}})).decode().unwrap_err();
        assert_eq!(error.to_string(), "invalid get request: missing field `id`");
        // A required nullable member may be null but not missing: a rename without `title` clears nothing.
        let error = envelope(json!({"token": "t", "request": {"op": "rename", "id": 1}})).decode().unwrap_err();
        assert_eq!(error.to_string(), "invalid rename request: missing field `title`");
        let cleared = envelope(json!({"token": "t", "request": {"op": "rename", "id": 1, "title": null}})).decode();
        assert_eq!(cleared, Ok(Request::Rename { id: 1, title: None }));
        let error =
            envelope(json!({"token": "t", "request": {"op": "get", "id": 9007199254740992_u64}})).decode().unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid get request: 9007199254740992 is above 9007199254740991, the largest integer JSON keeps exact"
        );
    }

    #[test]
    fn malformed_requests_say_what_is_missing() {
        let missing = envelope(json!({"token": "t"})).decode().unwrap_err();
        assert_eq!(missing.to_string(), "invalid request: the envelope needs a `request` object");
        let no_op = envelope(json!({"token": "t", "request": {"id": 1}})).decode().unwrap_err();
        assert_eq!(no_op.to_string(), "invalid request: the request needs an `op`");
        let number_op = envelope(json!({"token": "t", "request": {"op": 3}})).decode().unwrap_err();
        assert_eq!(number_op.to_string(), "invalid request: `op` must be a string");
    }

    #[test]
    fn a_known_op_decodes() {
        let request = envelope(json!({"token": "t", "request": {"op": "ping", "extra": true}})).decode();
        assert_eq!(request, Ok(Request::Ping));
    }
}
