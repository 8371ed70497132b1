//! The bundler refuses schemas that break the conventions of `schema/README.md`.

use std::path::{Path, PathBuf};

use opencode_pty_codegen::bundle::{Purpose, load};
use serde_json::{Value, json};

/// A throwaway schema folder with `protocol.json` and the given request files; removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, requests: &[(&str, Value)]) -> Scratch {
        let dir = std::env::temp_dir().join(format!("opencode-pty-codegen-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("requests")).expect("scratch folder");
        let refs: Vec<Value> =
            requests.iter().map(|(op, _)| json!({ "$ref": format!("requests/{op}.json") })).collect();
        let root = json!({
            "title": "test", "description": "test", "x-protocol-version": 8, "x-features": [],
            "definitions": {
                "Request": { "description": "requests", "oneOf": refs },
                "Response": { "description": "responses", "oneOf": [
                    { "description": "ok", "type": "object", "required": ["type"],
                      "properties": { "type": { "type": "string", "const": "ok" } } }
                ] }
            }
        });
        write(&dir.join("protocol.json"), &root);
        for (op, schema) in requests {
            write(&dir.join(format!("requests/{op}.json")), schema);
        }
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(value).expect("json")).expect("write");
}

fn request(op: &str) -> Value {
    json!({ "description": op, "x-answer": "ok", "type": "object", "required": ["op"],
            "properties": { "op": { "type": "string", "const": op } } })
}

#[test]
fn a_well_formed_schema_bundles() {
    let scratch = Scratch::new("ok", &[("ping", request("ping"))]);
    let bundle = load(&scratch.0, Purpose::Types).expect("bundles");
    assert_eq!(bundle.request_ops, ["ping"]);
    assert_eq!(bundle.response_types, ["ok"]);
    assert_eq!(bundle.answers, [("ping".to_owned(), "ok".to_owned())]);
}

#[test]
fn a_variant_without_its_tag_is_refused() {
    let untagged = json!({ "description": "no tag", "type": "object", "properties": {} });
    let scratch = Scratch::new("untagged", &[("ping", untagged)]);
    let error = load(&scratch.0, Purpose::Types).expect_err("refused").to_string();
    assert!(error.contains("must require `op` as a string const"), "{error}");
}

#[test]
fn a_property_without_a_description_is_refused() {
    let mut schema = request("get");
    schema["properties"]["id"] = json!({ "type": "integer" });
    let scratch = Scratch::new("undocumented", &[("get", schema)]);
    let error = load(&scratch.0, Purpose::Types).expect_err("refused").to_string();
    assert!(error.contains("Request.oneOf[0].id has no description"), "{error}");
}

#[test]
fn validation_only_rules_stay_out_of_the_types_bundle() {
    let mut schema = request("get");
    schema["allOf"] = json!([{ "x-validation-only": true, "required": ["id"] }]);
    let scratch = Scratch::new("validation", &[("get", schema)]);
    let types = load(&scratch.0, Purpose::Types).expect("bundles");
    let validation = load(&scratch.0, Purpose::Validation).expect("bundles");
    assert!(types.definitions()["Request"]["oneOf"][0].get("allOf").is_none());
    assert_eq!(validation.definitions()["Request"]["oneOf"][0]["allOf"][0], json!({ "required": ["id"] }));
}

#[test]
fn a_request_without_its_answer_is_refused() {
    let mut schema = request("ping");
    schema.as_object_mut().expect("an object").remove("x-answer");
    let scratch = Scratch::new("unanswered", &[("ping", schema)]);
    let error = load(&scratch.0, Purpose::Types).expect_err("refused").to_string();
    assert!(error.contains("request ping needs `x-answer`"), "{error}");

    let mut schema = request("ping");
    schema["x-answer"] = json!("pong");
    let scratch = Scratch::new("misanswered", &[("ping", schema)]);
    let error = load(&scratch.0, Purpose::Types).expect_err("refused").to_string();
    assert!(error.contains("x-answer \"pong\" is not a response type"), "{error}");
}

#[test]
fn a_base64_member_without_its_bytes_name_is_refused() {
    let mut schema = request("write");
    schema["properties"]["data_base64"] = json!({ "type": "string", "description": "bytes" });
    let scratch = Scratch::new("base64", &[("write", schema.clone())]);
    let error = load(&scratch.0, Purpose::Types).expect_err("refused").to_string();
    assert!(error.contains("data_base64 needs `x-bytes`"), "{error}");

    schema["properties"]["data_base64"]["x-bytes"] = json!("data");
    let scratch = Scratch::new("base64-named", &[("write", schema)]);
    load(&scratch.0, Purpose::Types).expect("bundles");
}

#[test]
fn message_extensions_are_read_and_kept_out_of_both_bundles() {
    let mut schema = request("write");
    schema["properties"]["data_base64"] = json!({ "type": "string", "description": "bytes", "x-bytes": "data" });
    let scratch = Scratch::new("extensions", &[("write", schema)]);
    for purpose in [Purpose::Types, Purpose::Validation] {
        let bundle = load(&scratch.0, purpose).expect("bundles");
        let text = bundle.document.to_string();
        for key in ["x-answer", "x-bytes", "x-event", "x-client-view"] {
            assert!(!text.contains(key), "{key} left in the {purpose:?} bundle: {text}");
        }
        assert_eq!(bundle.answers, [("write".to_owned(), "ok".to_owned())]);
        assert_eq!(bundle.responses.len(), 1);
        assert!(!bundle.responses[0].event && !bundle.responses[0].view);
    }
}

#[test]
fn absent_or_null_is_only_for_optional_nullable_members_of_definitions() {
    let mut marked = request("get");
    marked["properties"]["note"] =
        json!({ "type": ["string", "null"], "x-absent-or-null": true, "description": "a note" });
    let scratch = Scratch::new("absent-or-null", &[("get", marked)]);
    let error = load(&scratch.0, Purpose::Types).expect_err("refused").to_string();
    assert!(error.contains("only for members of a defs/ definition"), "{error}");
}
