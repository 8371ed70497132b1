//! The TypeScript client's copies of the wire constants in `wire.rs`. `client-ts` shares no code with the Rust
//! crates, so it writes the registration file name and the error texts it matches on itself; this test reads
//! those `export const` lines from its sources and fails when one differs from the constant here.

use std::path::{Path, PathBuf};

use opencode_pty_protocol::{AUTHENTICATION_FAILED, REGISTRATION_FILE, UNSUPPORTED_REQUEST_PREFIX};

/// Each TypeScript copy: the source file (under `client-ts/src`), the exported name, and the Rust constant.
const COPIES: &[(&str, &str, &str)] = &[
    ("node/registration.ts", "REGISTRATION_FILE", REGISTRATION_FILE),
    ("core/errors.ts", "AUTHENTICATION_FAILED", AUTHENTICATION_FAILED),
    ("core/errors.ts", "UNSUPPORTED_PREFIX", UNSUPPORTED_REQUEST_PREFIX),
];

/// The TypeScript client's source directory.
fn ts_sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../client-ts/src")
}

/// The string literal of `export const <name> = "<literal>";` in `source`, if there is exactly such a line.
/// Only a plain double-quoted literal without escapes is accepted: that is all these constants need, and
/// anything cleverer should fail loudly here rather than be half understood.
fn exported_literal(source: &str, name: &str) -> Option<String> {
    let prefix = format!("export const {name} = \"");
    let mut found = source.lines().filter_map(|line| line.trim().strip_prefix(prefix.as_str()));
    let rest = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let literal = rest.strip_suffix("\";")?;
    (!literal.contains(['"', '\\'])).then(|| literal.to_owned())
}

#[test]
fn the_typescript_client_spells_the_wire_constants_as_protocol_does() {
    let mut wrong = Vec::new();
    for (file, name, expected) in COPIES {
        let path = ts_sources().join(file);
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        match exported_literal(&source, name) {
            Some(literal) if literal == *expected => {}
            Some(literal) => {
                wrong.push(format!("client-ts/src/{file}: {name} is {literal:?}, protocol says {expected:?}"))
            }
            None => wrong.push(format!("client-ts/src/{file}: no single line `export const {name} = \"...\";`")),
        }
    }
    assert!(wrong.is_empty(), "the TypeScript client's wire constants drifted:\n{}", wrong.join("\n"));
}

#[test]
fn the_literal_reader_takes_only_one_plain_line() {
    assert_eq!(exported_literal("export const A = \"x y\";\n", "A").as_deref(), Some("x y"));
    assert_eq!(exported_literal("  export const A = \"x\";", "A").as_deref(), Some("x"));
    assert_eq!(exported_literal("export const AB = \"x\";", "A"), None);
    assert_eq!(exported_literal("export const A = \"x\";\nexport const A = \"y\";", "A"), None);
    assert_eq!(exported_literal("export const A = \"x\\\"\";", "A"), None);
    assert_eq!(exported_literal("export const A = `x`;", "A"), None);
}
