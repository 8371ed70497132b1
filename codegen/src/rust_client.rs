//! Emits `client-rs/src/generated.rs`: the values the Rust client returns for the responses it hands to callers
//! as values of their own (`x-client-view`) that carry base64 members (`x-bytes`), with those members decoded.
//!
//! Each is a struct with the members of its response variant, read from the protocol module's syntax tree (so
//! the types are the same by construction), except that a base64 member `m` becomes `name: Vec<u8>` (`name`
//! from `x-bytes`); a `TryFrom<Response>` builds it, turning `error` into `ClientError::Daemon`, another type
//! into `ClientError::Unexpected` and bad base64 into `ClientError::Protocol` (through `crate::types`). A view
//! without base64 members needs no struct: the client returns the protocol's named type.

use std::collections::BTreeSet;

use anyhow::{Context, Result};
use quote::format_ident;
use syn::parse_quote;
use syn::visit_mut::VisitMut;

use crate::bundle::Bundle;
use crate::variants::{EqTypes, variants};

/// The generated client module, formatted, with its "do not edit" header.
pub fn generate(bundle: &Bundle, protocol: &syn::File) -> Result<String> {
    let eq = EqTypes::of(protocol);
    let mut qualify = Qualify { local: local_types(protocol) };
    let responses = variants(protocol, "Response")?;
    let mut items: Vec<syn::Item> = Vec::new();
    for info in bundle.responses.iter().filter(|r| r.view && !r.bytes.is_empty()) {
        let variant =
            responses.iter().find(|v| v.tag == info.tag).with_context(|| format!("no response {}", info.tag))?;
        let name = &variant.ident;
        let wire = variant.struct_name("Response");
        let docs = &variant.docs;
        let mut fields = Vec::new();
        let mut values = Vec::new();
        let mut members = Vec::new();
        let mut all_eq = true;
        for field in &variant.fields {
            let member = field.ident.clone().context("a named member")?;
            let docs: Vec<&syn::Attribute> = field.attrs.iter().filter(|a| a.path().is_ident("doc")).collect();
            if let Some(bytes) = info.bytes_name(&member.to_string()) {
                let bytes = format_ident!("{bytes}");
                let note = format!(" Decoded from `{member}`:");
                let text = member.to_string();
                fields.push(quote::quote! { #[doc = #note] #(#docs)* pub #bytes: ::std::vec::Vec<u8> });
                values.push(quote::quote! { #bytes: crate::types::decode_base64(#text, &#member)? });
            } else {
                all_eq &= eq.holds(&field.ty);
                let mut ty = field.ty.clone();
                qualify.visit_type_mut(&mut ty);
                fields.push(quote::quote! { #(#docs)* pub #member: #ty });
                values.push(quote::quote! { #member });
            }
            members.push(member);
        }
        let derive: syn::Attribute = if all_eq {
            parse_quote!(#[derive(Clone, Debug, PartialEq, Eq)])
        } else {
            parse_quote!(#[derive(Clone, Debug, PartialEq)])
        };
        items.push(parse_quote! { #(#docs)* #derive pub struct #name { #(#fields,)* } });
        items.push(parse_quote! {
            impl ::std::convert::TryFrom<::opencode_pty_protocol::Response> for #name {
                type Error = crate::ClientError;
                fn try_from(
                    response: ::opencode_pty_protocol::Response,
                ) -> ::std::result::Result<Self, crate::ClientError> {
                    let ::opencode_pty_protocol::#wire { #(#members),* } = crate::types::answer(response)?;
                    Ok(#name { #(#values,)* })
                }
            }
        });
    }
    let file = syn::File { shebang: None, attrs: Vec::new(), items };
    Ok(format!("{}\n\n{}", crate::header("//"), prettyplease::unparse(&file)))
}

/// The structs and enums of the protocol module, which the client names through the protocol crate.
fn local_types(file: &syn::File) -> BTreeSet<String> {
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some(s.ident.to_string()),
            syn::Item::Enum(e) => Some(e.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// Rewrites a bare protocol type (`ProcessInfo`) as `::opencode_pty_protocol::ProcessInfo`.
struct Qualify {
    local: BTreeSet<String>,
}

impl VisitMut for Qualify {
    fn visit_type_path_mut(&mut self, path: &mut syn::TypePath) {
        let bare = path.qself.is_none() && path.path.leading_colon.is_none() && path.path.segments.len() == 1;
        if bare && self.local.contains(&path.path.segments[0].ident.to_string()) {
            let ident = &path.path.segments[0].ident;
            *path = parse_quote!(::opencode_pty_protocol::#ident);
            return;
        }
        syn::visit_mut::visit_type_path_mut(self, path);
    }
}
