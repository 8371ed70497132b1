//! The committed generated files are exactly what `schema/` gives. Locally a stale file is rewritten (and the
//! test still fails once, so the change is noticed and committed); with `CI` set nothing is written.

use opencode_pty_codegen::{generate, workspace_root};

/// At most this many differing lines are shown per file.
const SHOWN_LINES: usize = 40;

#[test]
fn generated_files_match_the_schema() {
    let root = workspace_root();
    let ci = std::env::var_os("CI").is_some();
    let mut report = String::new();
    for file in generate(&root).expect("the schema generates") {
        let path = root.join(&file.path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == file.contents {
            continue;
        }
        report.push_str(&format!("\n{} is stale:\n{}", file.path.display(), diff(&current, &file.contents)));
        if !ci {
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("create the folder");
            std::fs::write(&path, &file.contents).expect("rewrite the stale file");
            report.push_str("  (rewritten: commit it)\n");
        }
    }
    assert!(report.is_empty(), "generated files differ from schema/; run `just codegen` and commit:{report}");
}

/// The lines that differ, as `-` (committed) and `+` (generated), from the first difference on.
fn diff(old: &str, new: &str) -> String {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let first = old.iter().zip(&new).position(|(a, b)| a != b).unwrap_or(old.len().min(new.len()));
    let mut out = format!("  first difference at line {}\n", first + 1);
    for line in old.iter().skip(first).take(SHOWN_LINES / 2) {
        out.push_str(&format!("  - {line}\n"));
    }
    for line in new.iter().skip(first).take(SHOWN_LINES / 2) {
        out.push_str(&format!("  + {line}\n"));
    }
    out
}
