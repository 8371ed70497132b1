//! Two-step decoding of a request envelope `{"token": ..., "request": {...}}`, straight from a control frame's
//! payload.
//!
//! Step one ([`RequestEnvelope::parse`]) only finds the token and the request's raw text, borrowing the payload
//! and building no JSON tree, so checking a wrong token costs next to nothing beyond the payload itself (the
//! client is not authenticated yet). Step two ([`RequestEnvelope::decode`]), for authenticated envelopes only,
//! refuses duplicate members at any depth, then reads `op` and then the fields, so an unknown op and bad fields
//! give different, exact errors: `unsupported request: <op>` and `invalid <op> request: <detail>`. A client can
//! therefore probe whether a daemon knows a request.

use std::fmt;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::FrameError;
use crate::generated::{AUTHENTICATION_FAILED, REQUEST_OPS, Request, UNSUPPORTED_REQUEST_PREFIX};
use crate::unique::{Key, cut, first_duplicate, validate};

/// The longest unknown `op` an `unsupported request: <op>` answer repeats; a longer one is cut (and ends in
/// `...`), so the answer stays small whatever the client sent.
pub const MAX_REPORTED_OP_CHARS: usize = 64;

/// The longest `<detail>` of an `invalid <op> request: <detail>` answer; the decoder's text quotes the offending
/// value, which the client chose, so it is cut (ending in `...`) past this.
pub const MAX_REPORTED_DETAIL_CHARS: usize = 256;

/// Why a request envelope could not be decoded. The `Display` text is what a server answers in `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The envelope has no string `token`: answered like a wrong token (SPEC E3).
    #[error("{}", AUTHENTICATION_FAILED)]
    MissingToken,
    /// A member appears twice in one object of the envelope (for `token`, checked before authentication; for
    /// anything else, after). Nothing of such an envelope is carried out.
    #[error("invalid request: duplicate member `{member}`")]
    Duplicate {
        /// The member's name, cut to [`crate::MAX_REPORTED_MEMBER_CHARS`] characters.
        member: String,
    },
    /// The envelope has no `request` object, or the request has no string `op`.
    #[error("invalid request: {0}")]
    Malformed(&'static str),
    /// The request's `op` is not one this protocol version knows.
    #[error("{UNSUPPORTED_REQUEST_PREFIX}{op}")]
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

/// An envelope whose token has been found but whose request is not decoded yet. It borrows the payload.
#[derive(Debug, Clone)]
pub struct RequestEnvelope<'a> {
    /// The whole envelope's text.
    text: &'a str,
    /// The token's raw text, or why there is no usable one.
    token: Result<&'a RawValue, RequestError>,
    /// The request's raw text, if there is a `request` member.
    request: Option<&'a RawValue>,
}

impl<'a> RequestEnvelope<'a> {
    /// Reads a control frame's payload (see [`crate::decode_payload`] for output frames): UTF-8 text holding one
    /// JSON object. Only the `token` and `request` members are looked at, as raw text; everything else is
    /// skipped without being stored.
    ///
    /// # Errors
    ///
    /// [`FrameError::ControlNotUtf8`], [`FrameError::ControlNotJson`] or [`FrameError::ControlNotObject`], the
    /// same as [`crate::decode_payload`] gives for such a payload: a malformed frame.
    pub fn parse(payload: &'a [u8]) -> Result<RequestEnvelope<'a>, FrameError> {
        let len = payload.len();
        let text = std::str::from_utf8(payload)
            .map_err(|e| FrameError::ControlNotUtf8 { len, valid_up_to: e.valid_up_to() })?;
        // As strict as a JSON tree would be (depth, escapes, numbers), so what `decode_payload` calls malformed is
        // malformed here too; then the two members, from text known to be valid.
        validate(text).map_err(|source| FrameError::ControlNotJson { len, source })?;
        let scan = scan(text, &["token", "request"]).map_err(|source| FrameError::ControlNotJson { len, source })?;
        let Scanned::Object { members, duplicated } = scan else {
            let Scanned::NotObject(found) = scan else { unreachable!() };
            return Err(FrameError::ControlNotObject { len, found });
        };
        let token = match (duplicated[0], members[0]) {
            (true, _) => Err(RequestError::Duplicate { member: "token".into() }),
            (_, Some(raw)) if raw.get().starts_with('"') => Ok(raw),
            _ => Err(RequestError::MissingToken),
        };
        Ok(RequestEnvelope { text, token, request: members[1] })
    }

    /// The credential the client sent; compare it (in constant time) before calling [`Self::decode`].
    ///
    /// # Errors
    ///
    /// [`RequestError::MissingToken`] without a string `token`, [`RequestError::Duplicate`] when `token` appears
    /// twice (which of the two counts is not for the daemon to guess).
    pub fn token(&self) -> Result<String, RequestError> {
        let raw = self.token.clone()?;
        serde_json::from_str(raw.get()).map_err(|_| RequestError::MissingToken)
    }

    /// The length of the token's JSON text (its quotes and escapes included), 0 when there is no usable token: a
    /// server can refuse a token longer than its own could be written without copying it first.
    pub fn token_text_len(&self) -> usize {
        self.token.as_ref().map_or(0, |raw| raw.get().len())
    }

    /// The request's `op`, if the request is an object with a string `op`.
    pub fn op(&self) -> Option<String> {
        match scan(self.request?.get(), &["op"]).ok()? {
            Scanned::Object { members, .. } => serde_json::from_str(members[0]?.get()).ok(),
            Scanned::NotObject(_) => None,
        }
    }

    /// Decodes the request: refuses duplicate members anywhere in the envelope, then reads its `op`, then its
    /// fields.
    ///
    /// # Errors
    ///
    /// [`RequestError::Duplicate`], [`RequestError::Malformed`], [`RequestError::Unsupported`] or
    /// [`RequestError::Invalid`], in that order of checking.
    pub fn decode(&self) -> Result<Request, RequestError> {
        // `parse` validated the text, so the walk cannot fail; if it ever did, nothing is carried out.
        match first_duplicate(self.text) {
            Ok(None) => {}
            Ok(Some(member)) => return Err(RequestError::Duplicate { member }),
            Err(_) => return Err(RequestError::Malformed("the envelope is not valid JSON")),
        }
        let Some(request) = self.request else {
            return Err(RequestError::Malformed("the envelope needs a `request` object"));
        };
        if !request.get().starts_with('{') {
            return Err(RequestError::Malformed("`request` must be an object"));
        }
        let op = match scan(request.get(), &["op"]) {
            Ok(Scanned::Object { members, .. }) => members[0],
            _ => None,
        };
        let op: String = match op {
            Some(raw) => {
                serde_json::from_str(raw.get()).map_err(|_| RequestError::Malformed("`op` must be a string"))?
            }
            None => return Err(RequestError::Malformed("the request needs an `op`")),
        };
        if !REQUEST_OPS.contains(&op.as_str()) {
            return Err(RequestError::Unsupported { op: cut(&op, MAX_REPORTED_OP_CHARS) });
        }
        serde_json::from_str(request.get()).map_err(|error| RequestError::Invalid {
            detail: cut(&without_position(&error), MAX_REPORTED_DETAIL_CHARS),
            op,
        })
    }
}

/// A decoding error's message without the ` at line L column C` that errors from text carry (the request is
/// one line of the client's envelope; the position would only repeat what the detail names).
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&position) {
        Some(stripped) if error.line() > 0 => stripped.to_owned(),
        _ => message,
    }
}

/// What the top level of a JSON text holds, as far as [`scan`] looked.
enum Scanned<'a> {
    /// Not an object: what it is instead.
    NotObject(&'static str),
    /// An object: the raw text of each wanted member (in the order asked for; the last one when it appears
    /// twice), and whether it appears more than once.
    Object { members: Vec<Option<&'a RawValue>>, duplicated: Vec<bool> },
}

/// Reads the members `names` of the JSON object `text` as raw text, skipping everything else without storing
/// it.
fn scan<'a>(text: &'a str, names: &[&str]) -> Result<Scanned<'a>, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let scanned = Scan { names }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(scanned)
}

/// The visitor behind [`scan`].
struct Scan<'n> {
    names: &'n [&'n str],
}

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = Scanned<'de>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Scanned<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = Scanned<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scanned<'de>, A::Error> {
        let mut members = vec![None; self.names.len()];
        let mut duplicated = vec![false; self.names.len()];
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match self.names.iter().position(|name| *name == key) {
                Some(index) => {
                    let raw: &'de RawValue = map.next_value()?;
                    duplicated[index] |= members[index].replace(raw).is_some();
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Scanned::Object { members, duplicated })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scanned<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scanned::NotObject("array"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Scanned<'de>, E> {
        Ok(Scanned::NotObject("boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Scanned<'de>, E> {
        Ok(Scanned::NotObject("number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Scanned<'de>, E> {
        Ok(Scanned::NotObject("number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Scanned<'de>, E> {
        Ok(Scanned::NotObject("number"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Scanned<'de>, E> {
        Ok(Scanned::NotObject("string"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Scanned<'de>, E> {
        Ok(Scanned::NotObject("null"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(json: &str) -> Result<Request, RequestError> {
        RequestEnvelope::parse(json.as_bytes()).expect("a well-formed envelope").decode()
    }

    fn token(json: &str) -> Result<String, RequestError> {
        RequestEnvelope::parse(json.as_bytes()).expect("a well-formed envelope").token()
    }

    fn error(json: &str) -> String {
        decode(json).unwrap_err().to_string()
    }

    #[test]
    fn the_member_name_a_json_tree_reinterprets_is_refused_by_both_decoders_at_any_depth() {
        // A JSON tree would turn the inner object into `1` (or refuse it, for a string that is not JSON), so the
        // text would not mean what it says; both decoders refuse it the same way (found by fuzzing).
        let texts = [
            r#"{"request":{"$serde_json::private::RawValue":"write"},"token":"ef"}"#,
            r#"{"token":"t","request":{"op":"set_metadata","id":1,"metadata":{"k":{"$serde_json::private::RawValue":"1"}}}}"#,
            r#"{"$serde_json::private::RawValue":"{}"}"#,
        ];
        for text in texts {
            let envelope = RequestEnvelope::parse(text.as_bytes()).map(|_| ()).unwrap_err();
            let frame = crate::decode_payload(text.as_bytes()).map(|_| ()).unwrap_err();
            for error in [envelope.to_string(), frame.to_string()] {
                assert!(error.contains("the member name \"$serde_json::private::RawValue\" is reserved"), "{error}");
            }
        }
        // The same name as a string value, or any other name, is only text.
        let plain = r#"{"token":"t","request":{"op":"ping"},"note":"$serde_json::private::RawValue"}"#;
        assert!(RequestEnvelope::parse(plain.as_bytes()).is_ok() && crate::decode_payload(plain.as_bytes()).is_ok());
    }

    #[test]
    fn the_token_text_length_counts_quotes_and_escapes_without_a_copy() {
        let len = |json: &str| RequestEnvelope::parse(json.as_bytes()).expect("well-formed").token_text_len();
        assert_eq!(len(r#"{"token": "abc", "request": {}}"#), 5);
        assert_eq!(len(r#"{"token": "\u0061", "request": {}}"#), 8);
        assert_eq!(len(r#"{"token": 7}"#), 0, "not a string");
        assert_eq!(len(r#"{"request": {}}"#), 0, "missing");
        assert_eq!(len(r#"{"token": "a", "token": "b"}"#), 0, "duplicated");
    }

    #[test]
    fn the_token_is_read_before_the_request() {
        let parsed = RequestEnvelope::parse(br#"{"token": "abc", "request": {"op": "no such op"}}"#).unwrap();
        assert_eq!(parsed.token(), Ok("abc".to_owned()));
        assert_eq!(parsed.op().as_deref(), Some("no such op"));
        assert_eq!(token(r#"{"request": {"op": "ping"}}"#), Err(RequestError::MissingToken));
        let error = token(r#"{"token": 7, "request": {"op": "ping"}}"#).unwrap_err();
        assert_eq!(error, RequestError::MissingToken);
        assert_eq!(error.to_string(), "authentication failed", "clients re-read the registration on this text");
        assert_eq!(token(r#"{"token": "a\u0062c"}"#), Ok("abc".to_owned()), "escapes are undone");
    }

    #[test]
    fn a_duplicated_token_is_never_one_of_the_two() {
        let twice = token(r#"{"token": "wrong", "token": "good", "request": {"op": "ping"}}"#).unwrap_err();
        assert_eq!(twice, RequestError::Duplicate { member: "token".into() });
        assert_eq!(twice.to_string(), "invalid request: duplicate member `token`");
        let same = token(r#"{"token": "good", "request": {"op": "ping"}, "token": "good"}"#);
        assert!(same.is_err(), "even the same token twice is refused");
    }

    #[test]
    fn duplicate_members_are_refused_at_every_depth() {
        let shutdown = r#"{"token": "t", "request": {"op": "ping"}, "request": {"op": "shutdown"}}"#;
        assert_eq!(error(shutdown), "invalid request: duplicate member `request`");
        assert_eq!(
            error(r#"{"token": "t", "request": {"op": "ping", "op": "shutdown"}}"#),
            "invalid request: duplicate member `op`"
        );
        let env = r#"{"token": "t", "request": {"op": "create_pty", "env": {"A": "1", "A": "2"}}}"#;
        assert_eq!(error(env), "invalid request: duplicate member `A`");
        let extra = r#"{"token": "t", "extra": 1, "extra": 2, "request": {"op": "ping"}}"#;
        assert_eq!(error(extra), "invalid request: duplicate member `extra`");
        let deep = r#"{"token": "t", "request": {"op": "create_pipe", "metadata": {"a": [{"b": 1, "b": 1}]}}}"#;
        assert_eq!(error(deep), "invalid request: duplicate member `b`");
    }

    #[test]
    fn malformed_payloads_are_frame_errors() {
        assert!(matches!(RequestEnvelope::parse(b"[1, 2]"), Err(FrameError::ControlNotObject { found: "array", .. })));
        assert!(matches!(RequestEnvelope::parse(b"\"x\""), Err(FrameError::ControlNotObject { found: "string", .. })));
        assert!(matches!(RequestEnvelope::parse(br#"{"token": "t""#), Err(FrameError::ControlNotJson { .. })));
        assert!(matches!(RequestEnvelope::parse(br#"{"a": 1} {}"#), Err(FrameError::ControlNotJson { .. })));
        assert!(matches!(RequestEnvelope::parse(b"{\"a\": \"\xff\"}"), Err(FrameError::ControlNotUtf8 { .. })));
    }

    #[test]
    fn what_a_tree_would_refuse_is_malformed_before_any_member_is_read() {
        // Each shape once made the duplicate check fail open while the last `request` (shutdown) was decoded.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for x in [deep.as_str(), "1e400", r#""\udc00""#] {
            let text = format!(r#"{{"token":"t","x":{x},"request":{{"op":"ping"}},"request":{{"op":"shutdown"}}}}"#);
            assert!(matches!(RequestEnvelope::parse(text.as_bytes()), Err(FrameError::ControlNotJson { .. })), "{x}");
        }
    }

    #[test]
    fn answers_quote_client_text_only_up_to_a_bound() {
        let long_op = "o".repeat(10_000);
        let unsupported = error(&format!(r#"{{"token": "t", "request": {{"op": "{long_op}"}}}}"#));
        assert_eq!(unsupported, format!("unsupported request: {}...", "o".repeat(MAX_REPORTED_OP_CHARS)));
        let long_id = "x".repeat(100_000);
        let invalid = error(&format!(r#"{{"token": "t", "request": {{"op": "get", "id": "{long_id}"}}}}"#));
        assert!(invalid.starts_with("invalid get request: invalid type: string \"xxx"), "{invalid}");
        assert!(invalid.ends_with("..."), "{invalid}");
        assert!(invalid.chars().count() <= "invalid get request: ".len() + MAX_REPORTED_DETAIL_CHARS + 3);
    }

    #[test]
    fn an_unknown_op_is_unsupported() {
        assert_eq!(error(r#"{"token": "t", "request": {"op": "teleport", "id": 1}}"#), "unsupported request: teleport");
    }

    #[test]
    fn bad_fields_name_the_op() {
        let seven = error(r#"{"token": "t", "request": {"op": "get", "id": "seven"}}"#);
        assert_eq!(seven, "invalid get request: invalid type: string \"seven\", expected u64");
        assert_eq!(error(r#"{"token": "t", "request": {"op": "get"}}"#), "invalid get request: missing field `id`");
        // A required nullable member may be null but not missing: a rename without `title` clears nothing.
        let rename = error(r#"{"token": "t", "request": {"op": "rename", "id": 1}}"#);
        assert_eq!(rename, "invalid rename request: missing field `title`");
        let cleared = decode(r#"{"token": "t", "request": {"op": "rename", "id": 1, "title": null}}"#);
        assert_eq!(cleared, Ok(Request::Rename { id: 1, title: None }));
        let big = error(r#"{"token": "t", "request": {"op": "get", "id": 9007199254740992}}"#);
        assert_eq!(
            big,
            "invalid get request: 9007199254740992 is above 9007199254740991, the largest integer JSON keeps exact"
        );
    }

    #[test]
    fn malformed_requests_say_what_is_missing() {
        assert_eq!(error(r#"{"token": "t"}"#), "invalid request: the envelope needs a `request` object");
        assert_eq!(error(r#"{"token": "t", "request": [1]}"#), "invalid request: `request` must be an object");
        assert_eq!(error(r#"{"token": "t", "request": {"id": 1}}"#), "invalid request: the request needs an `op`");
        assert_eq!(error(r#"{"token": "t", "request": {"op": 3}}"#), "invalid request: `op` must be a string");
    }

    #[test]
    fn a_known_op_decodes() {
        assert_eq!(decode(r#"{"token": "t", "request": {"op": "ping", "extra": true}}"#), Ok(Request::Ping));
    }
}
