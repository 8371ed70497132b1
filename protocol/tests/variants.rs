//! The generated named types of the variants and the op table, against the schema's examples: every request's
//! `op()` and every response's `type_tag()` are the tags on the wire, every answer type and event is a response
//! type, and a variant converted to its named type and back encodes to the same JSON.

use std::path::{Path, PathBuf};

use opencode_pty_protocol::{
    AttachedResponse, EVENT_TYPES, GetRequest, OkResponse, PingRequest, ProcessResponse, RESPONSE_TYPES, Request,
    RequestVariant, Response, ResponseVariant, SnapshotRequest, SnapshotResponse,
};
use serde_json::Value;

/// The valid examples of one root (`Request`, `Response`), decoded.
fn examples<T: serde::de::DeserializeOwned>(root: &str) -> Vec<(PathBuf, Value, T)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/examples/valid");
    let mut found: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&format!("{root}."))))
        .map(|path| {
            let value: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
            let decoded = serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path, value, decoded)
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!found.is_empty(), "no {root} examples");
    found
}

#[test]
fn every_request_names_its_op_and_an_answer_that_is_a_response_type() {
    for (path, value, request) in examples::<Request>("Request") {
        assert_eq!(value["op"], request.op(), "{}", path.display());
        assert!(RESPONSE_TYPES.contains(&request.answer_type()), "{}: {}", path.display(), request.answer_type());
    }
}

#[test]
fn every_response_names_its_type_and_knows_whether_it_is_an_event() {
    for (path, value, response) in examples::<Response>("Response") {
        assert_eq!(value["type"], response.type_tag(), "{}", path.display());
        assert_eq!(response.is_event(), EVENT_TYPES.contains(&response.type_tag()), "{}", path.display());
    }
    assert!(EVENT_TYPES.iter().all(|event| RESPONSE_TYPES.contains(event)));
}

/// Converts `value` (of the variant `T`) to `T` and back, and checks that it encodes as before.
fn through<T, E>(value: E) -> T
where
    T: TryFrom<E, Error = E> + Into<E> + Clone,
    E: serde::Serialize + std::fmt::Debug,
{
    let before = serde_json::to_value(&value).expect("encodes");
    let named = T::try_from(value).unwrap_or_else(|other| panic!("not the variant: {other:?}"));
    let after = serde_json::to_value(named.clone().into()).expect("encodes");
    assert_eq!(before, after);
    named
}

#[test]
fn a_variant_goes_through_its_named_type_unchanged() {
    for (_, _, request) in examples::<Request>("Request") {
        match request.op() {
            "ping" => drop(through::<PingRequest, _>(request)),
            "get" => assert_eq!(through::<GetRequest, _>(request).id, 2),
            "snapshot" => drop(through::<SnapshotRequest, _>(request)),
            _ => {}
        }
    }
    for (_, _, response) in examples::<Response>("Response") {
        match response.type_tag() {
            "ok" => drop(through::<OkResponse, _>(response)),
            "process" => drop(through::<ProcessResponse, _>(response)),
            "snapshot" => drop(through::<SnapshotResponse, _>(response)),
            "attached" => drop(through::<AttachedResponse, _>(response)),
            _ => {}
        }
    }
    assert_eq!(PingRequest::try_from(Request::Shutdown), Err(Request::Shutdown), "the other variant comes back");
}

#[test]
fn the_op_table_pairs_each_request_type_with_its_answer() {
    fn answer_of<R: RequestVariant>() -> (&'static str, &'static str, bool) {
        (R::OP, <R::Answer as ResponseVariant>::TYPE, <R::Answer as ResponseVariant>::EVENT)
    }
    assert_eq!(answer_of::<PingRequest>(), ("ping", "pong", false));
    assert_eq!(answer_of::<GetRequest>(), ("get", "process", false));
    assert_eq!(answer_of::<opencode_pty_protocol::WaitRequest>(), ("wait", "exited", true));
    assert_eq!(Request::from(GetRequest { features: Vec::new(), id: 1 }).answer_type(), "process");
}
