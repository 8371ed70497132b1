//! Emits `protocol/src/generated.rs` from the types bundle with typify.
//!
//! Everything about the output is steered through typify's settings or the schema's `x-` extensions, and one
//! pass over typify's syntax tree that:
//! - removes the JSON schema typify copies into every doc comment (the schema is one click away and the
//!   copies would triple the file);
//! - gives unit variants (`Ping`, `Ok`, ...) the descriptions typify drops, and the values of string enums
//!   (`Mode::Pty` is "`pty`") as theirs;
//! - points required nullable members and `u64` members at `protocol`'s `serde_rules`, so a missing
//!   "always present, may be null" member and an integer above 2^53 − 1 are refused when decoding
//!   (typify would accept both);
//! - turns each `x-absent-or-null` member (typify's `Option<T>`) into `Option<Option<T>>`, left out when `None`
//!   and `null` when `Some(None)`, decoded by `serde_rules::absent_or_null`.
//!
//! The named types of the request and response variants ([`crate::variants`]) and the protocol constants are
//! appended.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use quote::ToTokens;
use schemars::schema::Schema;
use serde_json::Value;
use syn::visit_mut::VisitMut;

use crate::bundle::Bundle;

/// The generated Rust module, formatted, with its "do not edit" header.
pub fn generate(bundle: &Bundle) -> Result<String> {
    let file = protocol_file(bundle)?;
    Ok(format!("{}\n\n{}", crate::header("//"), prettyplease::unparse(&file)))
}

/// The generated module's syntax tree: typify's output, tidied, with the variants' types and the constants.
pub fn protocol_file(bundle: &Bundle) -> Result<syn::File> {
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
    Tidy { variant_docs: variant_docs(bundle), absent_or_null: bundle.absent_or_null.iter().cloned().collect() }
        .visit_file_mut(&mut file);
    let variants = crate::variants::items(&file, bundle)?;
    file.items.extend(variants);

    let list =
        |items: &mut dyn Iterator<Item = &String>| items.map(|i| format!("{i:?}")).collect::<Vec<_>>().join(", ");
    let mut constants = format!(
        "/// The protocol version (`x-protocol-version` of `schema/protocol.json`).
         pub const PROTOCOL_VERSION: u32 = {version};
         /// Additive capabilities of this protocol version (`x-features`).
         pub const FEATURES: &[&str] = &[{features}];
         /// Every request `op`, in schema order.
         pub const REQUEST_OPS: &[&str] = &[{ops}];
         /// Every response and event `type`, in schema order.
         pub const RESPONSE_TYPES: &[&str] = &[{types}];
         /// The response and event `type`s a subscription carries after `attached` (`x-event`), in schema order.
         pub const EVENT_TYPES: &[&str] = &[{events}];",
        version = bundle.protocol_version,
        features = list(&mut bundle.features.iter()),
        ops = list(&mut bundle.request_ops.iter()),
        types = list(&mut bundle.response_types.iter()),
        events = list(&mut bundle.responses.iter().filter(|r| r.event).map(|r| &r.tag)),
    );
    for constant in &bundle.constants {
        let doc = format!(" {}", constant.description.replace('\n', " "));
        constants.push_str(&format!(
            "\n#[doc = {doc:?}]\npub const {name}: &str = {value:?};",
            name = constant.name,
            value = constant.value
        ));
    }
    let constants: syn::File = syn::parse_str(&constants).context("constants")?;
    file.items.extend(constants.items);
    Ok(file)
}

/// The tidying pass over typify's output (see the module docs).
struct Tidy {
    /// `(enum name, tag value)` to the variant's description.
    variant_docs: BTreeMap<(String, String), String>,
    /// `(struct, member)`: the `x-absent-or-null` members.
    absent_or_null: std::collections::BTreeSet<(String, String)>,
}

/// The descriptions of the variants of every tagged union, by enum name and tag value.
fn variant_docs(bundle: &Bundle) -> BTreeMap<(String, String), String> {
    let mut docs = BTreeMap::new();
    for (name, schema) in bundle.definitions() {
        for variant in schema.get("oneOf").and_then(Value::as_array).into_iter().flatten() {
            let Some(properties) = variant.get("properties").and_then(Value::as_object) else { continue };
            let tag = properties.values().find_map(|p| p.get("const").and_then(Value::as_str));
            if let (Some(tag), Some(description)) = (tag, variant.get("description").and_then(Value::as_str)) {
                docs.insert((name.clone(), tag.to_owned()), description.to_owned());
            }
        }
    }
    docs
}

impl VisitMut for Tidy {
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
            syn::Item::Struct(s) => {
                self.visit_attributes_mut(&mut s.attrs);
                let name = s.ident.to_string();
                for field in &mut s.fields {
                    let member = serde_rename(&field.attrs)
                        .or_else(|| field.ident.as_ref().map(ToString::to_string))
                        .unwrap_or_default();
                    if self.absent_or_null.contains(&(name.clone(), member)) {
                        let inner = field.ty.clone();
                        field.ty = syn::parse_quote!(::std::option::Option<#inner>);
                        let path = "crate::serde_rules::absent_or_null";
                        field.attrs.push(syn::parse_quote!(#[serde(deserialize_with = #path)]));
                    }
                }
            }
            syn::Item::Enum(e) => {
                self.visit_attributes_mut(&mut e.attrs);
                let name = e.ident.to_string();
                for variant in &mut e.variants {
                    let has_doc = variant.attrs.iter().any(|a| doc_text(a).is_some());
                    let tag = serde_rename(&variant.attrs);
                    if let (false, Some(tag)) = (has_doc, tag) {
                        // A union variant's own description, else (a string enum's value) the value itself.
                        let doc = self.variant_docs.get(&(name.clone(), tag.clone())).cloned();
                        let doc = doc.unwrap_or_else(|| format!("`{tag}`"));
                        variant.attrs.insert(0, syn::parse_quote!(#[doc = #doc]));
                    }
                }
            }
            _ => {}
        }
        syn::visit_mut::visit_item_mut(self, item);
    }

    fn visit_field_mut(&mut self, field: &mut syn::Field) {
        let ty: String = field.ty.to_token_stream().to_string().split_whitespace().collect();
        let optional = field
            .attrs
            .iter()
            .any(|a| a.path().is_ident("serde") && a.to_token_stream().to_string().contains("default"));
        let rule = match ty.as_str() {
            // An `x-absent-or-null` member has its rule already.
            t if t.starts_with("::std::option::Option<::std::option::Option<") => None,
            "u64" => Some("exact_u64"),
            "::std::option::Option<u64>" => Some("nullable_exact_u64"),
            t if t.starts_with("::std::option::Option<") && !optional => Some("required_nullable"),
            _ => None,
        };
        if let Some(rule) = rule {
            let path = format!("crate::serde_rules::{rule}");
            field.attrs.push(syn::parse_quote!(#[serde(deserialize_with = #path)]));
        }
        syn::visit_mut::visit_field_mut(self, field);
    }
}

/// The value of `#[serde(rename = "...")]`, if present.
pub(crate) fn serde_rename(attributes: &[syn::Attribute]) -> Option<String> {
    attributes.iter().filter(|a| a.path().is_ident("serde")).find_map(|a| {
        let mut rename = None;
        let _ = a.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let value: syn::LitStr = meta.value()?.parse()?;
                rename = Some(value.value());
            }
            Ok(())
        });
        rename
    })
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
