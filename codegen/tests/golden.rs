//! Golden-file test of the generators on a small fixture schema (`tests/fixtures/golden/schema`). The drift
//! test only shows that the committed protocol files match the real schema; this one pins down what each step
//! of the Rust tidying pass and the TypeScript writer does, on one example of every shape they treat specially,
//! so a change in their output (or in typify's, after an upgrade) shows up as a readable diff.
//!
//! The expected output is committed beside the fixture (`expected.rs` and `expected.ts` for the protocol
//! modules, `expected_client.rs` and `expected_views.ts` for the clients' decoded and camelCase values). After an
//! intended
//! change, regenerate it with `UPDATE_GOLDEN=1 cargo test -p opencode-pty-codegen --test golden`, read the
//! diff, and commit it.

use std::path::{Path, PathBuf};

use opencode_pty_codegen::bundle::{self, Bundle, Purpose};
use opencode_pty_codegen::{rust, rust_client, typescript, typescript_views};

/// At most this many differing lines are shown from each side.
const SHOWN_LINES: usize = 20;

/// The fixture folder.
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden")
}

/// The fixture schema, bundled for the type generators.
fn types_bundle() -> Bundle {
    bundle::load(&fixture().join("schema"), Purpose::Types).expect("the fixture schema bundles")
}

/// Compares `generated` with the committed `expected` file, or rewrites that file when `UPDATE_GOLDEN` is set.
fn check(expected: &str, generated: &str) {
    let path = fixture().join(expected);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, generated).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} differs from what the generator gives now:\n{}\nIf the change is intended, run \
         `UPDATE_GOLDEN=1 cargo test -p opencode-pty-codegen --test golden`, review the diff and commit it.",
        path.display(),
        diff(&committed, generated),
    );
}

/// The lines that differ, as `-` (committed) and `+` (generated), from the first difference on.
fn diff(old: &str, new: &str) -> String {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let first = old.iter().zip(&new).position(|(a, b)| a != b).unwrap_or(old.len().min(new.len()));
    let mut out = format!("  first difference at line {}\n", first + 1);
    for line in old.iter().skip(first).take(SHOWN_LINES) {
        out.push_str(&format!("  - {line}\n"));
    }
    for line in new.iter().skip(first).take(SHOWN_LINES) {
        out.push_str(&format!("  + {line}\n"));
    }
    out
}

#[test]
fn rust_output_matches_the_golden_file() {
    check("expected.rs", &rust::generate(&types_bundle()).expect("the fixture generates Rust"));
}

#[test]
fn typescript_output_matches_the_golden_file() {
    let validation = bundle::load(&fixture().join("schema"), Purpose::Validation).expect("the fixture bundles");
    check(
        "expected.ts",
        &typescript::generate(&types_bundle(), &validation).expect("the fixture generates TypeScript"),
    );
}

#[test]
fn rust_client_output_matches_the_golden_file() {
    let bundle = types_bundle();
    let protocol = rust::protocol_file(&bundle).expect("the fixture generates Rust");
    check("expected_client.rs", &rust_client::generate(&bundle, &protocol).expect("the fixture generates the client"));
}

#[test]
fn typescript_views_match_the_golden_file() {
    check("expected_views.ts", &typescript_views::generate(&types_bundle()).expect("the fixture generates views"));
}

/// Each variant gets a named type with its conversions and its place in the op table; the checks name them on
/// the output, as for the tidying pass below.
#[test]
fn every_variant_gets_a_named_type_and_a_row_of_the_op_table() {
    let rust = rust::generate(&types_bundle()).expect("the fixture generates Rust");
    for expected in [
        "pub struct PingRequest;",
        "pub struct ReadRequest {",
        "pub struct OkResponse;",
        "pub struct DoneResponse {",
        "impl ::std::convert::From<ReadRequest> for Request",
        "impl ::std::convert::TryFrom<Response> for DoneResponse",
        "type Answer = DoneResponse;",
        "const EVENT: bool = true;",
        "Request::Read { .. } => \"done\"",
        "matches!(self, Response::Done { .. })",
        r#"pub const EVENT_TYPES: &[&str] = &["done"];"#,
        r#"pub const SAMPLE_TEXT: &str = "sample text";"#,
    ] {
        assert!(rust.contains(expected), "no `{expected}` in the Rust output");
    }
    let derive_before = |name: &str| {
        let at = rust.find(&format!("pub struct {name}")).unwrap_or_else(|| panic!("no {name}"));
        rust[..at].rfind("#[derive(").map(|d| rust[d..at].to_owned()).expect("a derive")
    };
    assert!(derive_before("ReadRequest").contains(" Eq)"), "every member of read is Eq");
    assert!(!derive_before("DoneResponse").contains(" Eq)"), "`Item` is not Eq, so neither is done");

    let client = rust_client::generate(&types_bundle(), &rust::protocol_file(&types_bundle()).expect("Rust"))
        .expect("the fixture generates the client");
    assert!(client.contains("pub data: ::std::vec::Vec<u8>"), "the base64 member is decoded:\n{client}");
    assert!(client.contains("::opencode_pty_protocol::Item"), "protocol types are named through the crate");
    let views = typescript_views::generate(&types_bundle()).expect("views");
    assert!(views.contains("readonly data: Uint8Array;") && views.contains("readonly type: \"done\";"), "{views}");
    assert!(views.contains("...(response.lines === undefined ? {} : { lines: response.lines }),"), "{views}");
}

/// The golden file could be regenerated from a broken pass without anyone noticing, so the steps of the Rust
/// tidying pass are also checked by name on the output itself.
#[test]
fn every_tidying_step_shows_in_the_rust_output() {
    let rust = rust::generate(&types_bundle()).expect("the fixture generates Rust");
    let field = |name: &str| -> String {
        let at = rust.find(&format!(" {name}: ")).unwrap_or_else(|| panic!("no field {name}"));
        let start = rust[..at].rfind(",\n").or_else(|| rust[..at].rfind("{\n")).expect("a field starts a line");
        rust[start..at].to_owned()
    };
    let rule = |name: &str| format!("deserialize_with = \"crate::serde_rules::{name}\"");

    assert!(!rust.contains("<details>") && !rust.contains("```json"), "the copied JSON schemas are removed");
    assert!(rust.contains("A request with only its tag"), "a unit variant gets its description back");
    assert!(
        rust.contains("///`large_one`") || rust.contains("/// `large_one`"),
        "a string enum value documents itself"
    );
    for (member, expected) in [("offset", "exact_u64"), ("size", "exact_u64"), ("end", "exact_u64")] {
        assert!(field(member).contains(&rule(expected)), "{member} should get {expected}: {}", field(member));
    }
    for member in ["total", "lines"] {
        assert!(field(member).contains(&rule("nullable_exact_u64")), "{member}: {}", field(member));
    }
    assert!(field("status").contains(&rule("required_nullable")), "status: {}", field("status"));
    assert!(!field("limit").contains("deserialize_with"), "an optional nullable member is left alone");
    assert!(rust.contains("pub const PROTOCOL_VERSION: u32 = 3;"), "the constants are appended");
    assert!(rust.contains(r#"pub const FEATURES: &[&str] = &["sample_feature"];"#));
    assert!(rust.contains(r#"pub const REQUEST_OPS: &[&str] = &["ping", "read"];"#));
    assert!(rust.contains(r#"pub const RESPONSE_TYPES: &[&str] = &["ok", "done"];"#));
}

#[test]
fn the_types_bundle_drops_validation_only_rules_and_the_validation_bundle_keeps_them() {
    let pattern = "^[a-z]+$";
    let types = types_bundle().document.to_string();
    let validation = bundle::load(&fixture().join("schema"), Purpose::Validation).expect("bundles").document;
    assert!(!types.contains(pattern) && !types.contains("x-validation-only"), "{types}");
    let validation = validation.to_string();
    assert!(validation.contains(pattern) && !validation.contains("x-validation-only"), "{validation}");
}
