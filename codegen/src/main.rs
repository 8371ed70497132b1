//! `opencode-pty-codegen`: writes the generated protocol files from `schema/` (`just codegen`).
//!
//! `--check` writes nothing and fails when a committed file differs from what the schema gives, naming the
//! command that fixes it.

use std::process::ExitCode;

use anyhow::{Context, Result};

fn main() -> Result<ExitCode> {
    let check = std::env::args().skip(1).any(|a| a == "--check");
    let root = opencode_pty_codegen::workspace_root();
    let mut stale = Vec::new();
    for file in opencode_pty_codegen::generate(&root)? {
        let path = root.join(&file.path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == file.contents {
            continue;
        }
        if check {
            stale.push(file.path.display().to_string());
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, &file.contents).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", file.path.display());
    }
    if !stale.is_empty() {
        eprintln!(
            "stale generated files: {}\nrun `just codegen` (cargo run -p opencode-pty-codegen) and commit",
            stale.join(", ")
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
