//! `opencode-pty-codegen`: turns `schema/` into the committed protocol code.
//!
//! [`generate`] is the one function the CLI (`cargo run -p opencode-pty-codegen`, `just codegen`) and the
//! drift test share. It bundles the schema ([`bundle`]), emits the Rust types with typify ([`rust`]) plus a
//! named type per request and response variant ([`variants`]), the Rust client's decoded values
//! ([`rust_client`]), the TypeScript types ([`typescript`]) and the TypeScript client's camelCase values
//! ([`typescript_views`]), and the bundled validation schema, and returns each file's path and contents without
//! touching the disk.

pub mod bundle;
pub mod rust;
pub mod rust_client;
pub mod typescript;
pub mod typescript_views;
pub mod variants;

use std::path::{Path, PathBuf};

use anyhow::Result;

/// One generated file: its path relative to the workspace root, and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// Relative to the workspace root.
    pub path: PathBuf,
    /// The whole file.
    pub contents: String,
}

/// The workspace root (the parent of this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("codegen lives in the workspace").to_path_buf()
}

/// Every generated file, from the schema under `root/schema`.
pub fn generate(root: &Path) -> Result<Vec<Generated>> {
    let schema = root.join("schema");
    let types = bundle::load(&schema, bundle::Purpose::Types)?;
    let validation = bundle::load(&schema, bundle::Purpose::Validation)?;
    let protocol = rust::protocol_file(&types)?;
    Ok(vec![
        Generated {
            path: "protocol/src/generated.rs".into(),
            contents: format!("{}\n\n{}", header("//"), prettyplease::unparse(&protocol)),
        },
        Generated { path: "client-rs/src/generated.rs".into(), contents: rust_client::generate(&types, &protocol)? },
        Generated {
            path: "client-ts/src/generated/protocol.ts".into(),
            contents: typescript::generate(&types, &validation)?,
        },
        Generated { path: "client-ts/src/generated/views.ts".into(), contents: typescript_views::generate(&types)? },
        Generated {
            path: "client-ts/src/generated/schema.ts".into(),
            contents: typescript::generate_schema(&validation)?,
        },
        Generated {
            path: "protocol/src/schema.json".into(),
            contents: format!("{}\n", serde_json::to_string_pretty(&validation.document)?),
        },
    ])
}

/// The first line of every generated source file, behind the language's comment marker.
pub fn header(comment: &str) -> String {
    format!(
        "{comment}! Generated from `schema/` by `cargo run -p opencode-pty-codegen` (`just codegen`): do not edit by hand.\n\
         {comment}! Change the schema and regenerate; `codegen/tests/drift.rs` fails while this file is stale."
    )
}
