//! Emits `protocol/src/generated.rs` from the types bundle with typify.
//!
//! Everything about the output is steered through typify's settings or the schema's `x-` extensions. One
//! tidying pass removes the JSON schema typify copies into every doc comment (the schema is one click away
//! and the copies would triple the file), and the protocol constants are appended.

use anyhow::{Context, Result};
use schemars::schema::Schema;
use syn::visit_mut::VisitMut;

use crate::bundle::Bundle;

/// The generated Rust module, formatted, with its "do not edit" header.
pub fn generate(bundle: &Bundle) -> Result<String> {
    let mut settings = typify::TypeSpaceSettings::default();
    settings.with_derive("PartialEq".into());
    let mut space = typify::TypeSpace::new(&settings);
    let definitions = bundle
        .definitions()
        .iter()
        .map(|(name, schema)| {
            let schema: Schema =
                serde_json::from_value(schema.clone()).with_context(|| format!("definition {name}"))?;
            Ok((name.clone(), schema))
        })
        .collect::<Result<Vec<_>>>()?;
    space.add_ref_types(definitions).context("typify refused the schema")?;
    let mut file: syn::File = syn::parse2(space.to_stream()).context("typify emitted invalid Rust")?;
    StripSchemaDocs.visit_file_mut(&mut file);

    let ops = bundle.request_ops.iter().map(|op| format!("{op:?}")).collect::<Vec<_>>().join(", ");
    let types = bundle.response_types.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join(", ");
    let features = bundle.features.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>().join(", ");
    let constants = format!(
        "/// The protocol version (`x-protocol-version` of `schema/protocol.json`).
         pub const PROTOCOL_VERSION: u32 = {version};
         /// Additive capabilities of this protocol version (`x-features`).
         pub const FEATURES: &[&str] = &[{features}];
         /// Every request `op`, in schema order.
         pub const REQUEST_OPS: &[&str] = &[{ops}];
         /// Every response and event `type`, in schema order.
         pub const RESPONSE_TYPES: &[&str] = &[{types}];",
        version = bundle.protocol_version,
    );
    let constants: syn::File = syn::parse_str(&constants).context("constants")?;
    file.items.extend(constants.items);

    let body = prettyplease::unparse(&file);
    Ok(format!("{}\n\n{body}", crate::header("//")))
}

/// Drops the `<details>` block with the JSON schema that typify appends to each type's doc comment.
struct StripSchemaDocs;

impl VisitMut for StripSchemaDocs {
    fn visit_attributes_mut(&mut self, attributes: &mut Vec<syn::Attribute>) {
        let mut in_details = false;
        attributes.retain(|attribute| {
            let Some(text) = doc_text(attribute) else { return true };
            if text.contains("<details>") {
                in_details = true;
            }
            let keep = !in_details;
            if text.contains("</details>") {
                in_details = false;
            }
            keep
        });
        // The blank doc line that separated the block from the description.
        if let Some(last_doc) = attributes.iter().rposition(|a| doc_text(a).is_some())
            && doc_text(&attributes[last_doc]).is_some_and(|t| t.trim().is_empty())
        {
            attributes.remove(last_doc);
        }
    }

    fn visit_item_mut(&mut self, item: &mut syn::Item) {
        match item {
            syn::Item::Struct(s) => self.visit_attributes_mut(&mut s.attrs),
            syn::Item::Enum(e) => self.visit_attributes_mut(&mut e.attrs),
            _ => {}
        }
        syn::visit_mut::visit_item_mut(self, item);
    }
}

/// The text of a `#[doc = "..."]` attribute.
fn doc_text(attribute: &syn::Attribute) -> Option<String> {
    if !attribute.path().is_ident("doc") {
        return None;
    }
    let syn::Meta::NameValue(meta) = &attribute.meta else { return None };
    let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(text), .. }) = &meta.value else { return None };
    Some(text.value())
}
