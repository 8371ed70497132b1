//! Every example under `schema/examples/` against the generated types and the bundled schema: valid ones
//! validate and round-trip through the Rust types to the identical JSON (left-out keys stay left out, nulls
//! stay null); invalid ones fail validation.

use std::path::{Path, PathBuf};

use opencode_pty_protocol::{Envelope, OutputFrame, Registration, Request, Response, SCHEMA_JSON};
use serde_json::{Value, json};

fn examples(kind: &str) -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/examples").join(kind);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).expect("utf-8 name").to_owned();
            let root = name.split('.').next().expect("a root prefix").to_owned();
            (root, path)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no examples in {}", dir.display());
    files
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read example");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A validator for one root definition of the bundled schema.
fn validator(root: &str) -> jsonschema::Validator {
    let mut schema: Value = serde_json::from_str(SCHEMA_JSON).expect("bundled schema");
    schema["allOf"] = json!([{ "$ref": format!("#/definitions/{root}") }]);
    jsonschema::draft7::new(&schema).unwrap_or_else(|e| panic!("schema for {root}: {e}"))
}

/// Deserializes into the root's Rust type and serializes back.
fn round_trip(root: &str, value: &Value) -> Result<Value, serde_json::Error> {
    fn via<T: serde::de::DeserializeOwned + serde::Serialize>(value: &Value) -> Result<Value, serde_json::Error> {
        serde_json::to_value(serde_json::from_value::<T>(value.clone())?)
    }
    match root {
        "Request" => via::<Request>(value),
        "Response" => via::<Response>(value),
        "Envelope" => via::<Envelope>(value),
        "Registration" => via::<Registration>(value),
        "OutputFrame" => via::<OutputFrame>(value),
        other => panic!("unknown example root {other}"),
    }
}

#[test]
fn valid_examples_validate_and_round_trip_exactly() {
    for (root, path) in examples("valid") {
        let value = read(&path);
        let validator = validator(&root);
        let errors: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{} does not validate: {errors:?}", path.display());
        let back = round_trip(&root, &value).unwrap_or_else(|e| panic!("{} does not decode: {e}", path.display()));
        assert_eq!(back, value, "{} changes in a round trip", path.display());
    }
}

/// Invalid examples whose rule only the schema states (the generated types accept them): exactly one of `pty`
/// and `pipe` matching `mode`, the registration's hex patterns, and the size and length limits (`MAX_COLS`,
/// `MAX_ROWS`, `MAX_TITLE_CHARS`, `MAX_COMMANDS`, ...), which the daemon checks itself with messages that name the limit.
const SCHEMA_ONLY_RULES: &[&str] = &[
    "Response.process-with-pty-and-pipe",
    "Response.process-pipe-mode-with-pty",
    "Registration.bad-token",
    "Request.create-pty-cols-too-large",
    "Request.resize-rows-too-large",
    "Request.create-pty-title-too-long",
    "Request.rename-title-too-long",
    "Request.subscribe-attachment-id-too-long",
    "Request.create-pipe-group-id-too-long",
    "Request.create-pipe-too-many-args",
    "Request.commands-limit-too-large",
    "Request.run-timeout-too-long",
    "Request.list-too-many-features",
    "Request.upgrade-program-too-long",
];

#[test]
fn invalid_examples_fail_validation_and_decoding() {
    for (root, path) in examples("invalid") {
        let value = read(&path);
        assert!(!validator(&root).is_valid(&value), "{} validates but must not", path.display());
        let name = path.file_stem().and_then(|n| n.to_str()).expect("name");
        if !SCHEMA_ONLY_RULES.contains(&name) {
            assert!(round_trip(&root, &value).is_err(), "{} decodes but must not", path.display());
        }
    }
}

#[test]
fn every_request_and_response_has_a_valid_example() {
    let valid = examples("valid");
    let tags = |root: &str, tag: &str| -> Vec<String> {
        valid.iter().filter(|(r, _)| r == root).map(|(_, p)| read(p)[tag].as_str().expect("tag").to_owned()).collect()
    };
    let (ops, types) = (tags("Request", "op"), tags("Response", "type"));
    for op in opencode_pty_protocol::REQUEST_OPS {
        assert!(ops.iter().any(|o| o == op), "no valid example of request {op}");
    }
    for ty in opencode_pty_protocol::RESPONSE_TYPES {
        assert!(types.iter().any(|t| t == ty), "no valid example of response {ty}");
    }
}

/// Instances that are valid and decode, but come back in another spelling: an optional key sent as null is
/// the same as leaving it out, and the types leave it out.
#[test]
fn decode_only_examples_validate_and_decode() {
    for (root, path) in examples("decode-only") {
        let value = read(&path);
        assert!(validator(&root).is_valid(&value), "{} does not validate", path.display());
        let back = round_trip(&root, &value).unwrap_or_else(|e| panic!("{} does not decode: {e}", path.display()));
        let mut without_nulls = value.clone();
        without_nulls.as_object_mut().expect("an object").retain(|_, v| !v.is_null());
        assert_eq!(back, without_nulls, "{}", path.display());
    }
}
