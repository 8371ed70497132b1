//! The wire constants the TypeScript client shares with the Rust crates (the registration file name and the
//! error texts it matches on) come from the schema's `x-constants`, generated into both languages. This test
//! reads the `export const` lines of the generated TypeScript and fails when one differs from the Rust constant,
//! and fails when a hand-written TypeScript source defines or spells one of them again instead of importing it.

use std::path::{Path, PathBuf};

use opencode_pty_protocol::{
    ALREADY_OWNED, AUTHENTICATION_FAILED, LOCK_FILE, REGISTRATION_FILE, UNSUPPORTED_REQUEST_PREFIX,
};

/// Each shared constant: its name in both languages and the Rust value.
const SHARED: &[(&str, &str)] = &[
    ("REGISTRATION_FILE", REGISTRATION_FILE),
    ("LOCK_FILE", LOCK_FILE),
    ("AUTHENTICATION_FAILED", AUTHENTICATION_FAILED),
    ("UNSUPPORTED_REQUEST_PREFIX", UNSUPPORTED_REQUEST_PREFIX),
    ("ALREADY_OWNED", ALREADY_OWNED),
];

/// The generated TypeScript module that holds them.
const GENERATED: &str = "generated/protocol.ts";

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

/// Every `.ts` file under `dir`, but for `generated/`.
fn hand_written(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display())) {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "generated") {
                hand_written(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "ts") {
            out.push(path);
        }
    }
}

#[test]
fn the_typescript_client_spells_the_wire_constants_as_protocol_does() {
    let path = ts_sources().join(GENERATED);
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut wrong = Vec::new();
    for (name, expected) in SHARED {
        match exported_literal(&source, name) {
            Some(literal) if literal == *expected => {}
            Some(literal) => wrong.push(format!("{GENERATED}: {name} is {literal:?}, protocol says {expected:?}")),
            None => wrong.push(format!("{GENERATED}: no single line `export const {name} = \"...\";`")),
        }
    }
    assert!(wrong.is_empty(), "the TypeScript client's wire constants drifted:\n{}", wrong.join("\n"));
}

#[test]
fn no_hand_written_typescript_copies_a_wire_constant() {
    let mut files = Vec::new();
    hand_written(&ts_sources(), &mut files);
    assert!(files.len() > 5, "found too few TypeScript sources: {files:?}");
    let mut copies = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).expect("read");
        for (name, value) in SHARED {
            let quoted = format!("\"{value}\"");
            if source.contains(&format!("export const {name} =")) || source.contains(&quoted) {
                copies.push(format!("{} copies {name} ({quoted}): import it from {GENERATED}", file.display()));
            }
        }
    }
    assert!(copies.is_empty(), "{}", copies.join("\n"));
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
