//! The named Rust types of the request and response variants, appended to `protocol/src/generated.rs`.
//!
//! typify makes `Request` and `Response` enums whose variants are not types of their own, so a function cannot
//! take or return "a `snapshot` response". For each variant this module adds a struct with the same members
//! (`SnapshotResponse`, `CreatePtyRequest`; a unit struct for a variant without members), read from typify's
//! own output so that the types are the same by construction:
//! - `From<struct>` for the enum and `TryFrom<enum>` for the struct (the other variant handed back on a
//!   mismatch), so a struct is sent and received through the enum and the wire format stays the enum's;
//! - `RequestVariant` (the op and the response type that answers it, `x-answer`) and `ResponseVariant` (the
//!   type and whether it is a subscription event, `x-event`), the op table the clients dispatch on;
//! - `Request::op`, `Request::answer_type`, `Response::type_tag` and `Response::is_event`.
//!
//! A struct derives `Eq` when every type its members mention does.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result, ensure};
use quote::{ToTokens, format_ident};
use syn::parse_quote;

use crate::bundle::Bundle;

/// The items to append to the generated module.
pub fn items(file: &syn::File, bundle: &Bundle) -> Result<Vec<syn::Item>> {
    let eq = EqTypes::of(file);
    let requests = variants(file, "Request")?;
    let responses = variants(file, "Response")?;
    let answers: BTreeMap<&str, &str> = bundle.answers.iter().map(|(op, ty)| (op.as_str(), ty.as_str())).collect();
    let events: BTreeSet<&str> = bundle.responses.iter().filter(|r| r.event).map(|r| r.tag.as_str()).collect();
    let response_struct = |tag: &str| -> Result<syn::Ident> {
        let variant = responses.iter().find(|v| v.tag == tag).with_context(|| format!("no response {tag}"))?;
        Ok(variant.struct_name("Response"))
    };

    let mut items = Vec::new();
    for variant in &requests {
        items.extend(variant.conversions("Request", &eq));
        let name = variant.struct_name("Request");
        let op = &variant.tag;
        let answer = answers.get(op.as_str()).with_context(|| format!("request {op} has no x-answer"))?;
        let answer = response_struct(answer)?;
        items.push(parse_quote! {
            impl crate::variant::RequestVariant for #name {
                const OP: &'static str = #op;
                type Answer = #answer;
            }
        });
    }
    for variant in &responses {
        items.extend(variant.conversions("Response", &eq));
        let name = variant.struct_name("Response");
        let tag = &variant.tag;
        let event = events.contains(tag.as_str());
        items.push(parse_quote! {
            impl crate::variant::ResponseVariant for #name {
                const TYPE: &'static str = #tag;
                const EVENT: bool = #event;
            }
        });
    }

    let op_arms = requests.iter().map(|v| {
        let (pattern, op) = (v.pattern("Request"), &v.tag);
        quote::quote! { #pattern => #op }
    });
    let answer_arms = requests
        .iter()
        .map(|v| {
            let pattern = v.pattern("Request");
            let answer = answers.get(v.tag.as_str()).context("x-answer")?;
            Ok(quote::quote! { #pattern => #answer })
        })
        .collect::<Result<Vec<_>>>()?;
    items.push(parse_quote! {
        impl Request {
            /// The `op` tag, as on the wire.
            pub fn op(&self) -> &'static str {
                match self { #(#op_arms,)* }
            }
            /// The `type` of the response that answers this request (`x-answer` in the schema); an `error` may
            /// answer any request instead.
            pub fn answer_type(&self) -> &'static str {
                match self { #(#answer_arms,)* }
            }
        }
    });
    let type_arms = responses.iter().map(|v| {
        let (pattern, tag) = (v.pattern("Response"), &v.tag);
        quote::quote! { #pattern => #tag }
    });
    let event_patterns: Vec<_> =
        responses.iter().filter(|v| events.contains(v.tag.as_str())).map(|v| v.pattern("Response")).collect();
    ensure!(!event_patterns.is_empty() || events.is_empty(), "events name no response");
    let is_event: syn::Expr = if event_patterns.is_empty() {
        parse_quote!(false)
    } else {
        parse_quote!(matches!(self, #(#event_patterns)|*))
    };
    items.push(parse_quote! {
        impl Response {
            /// The `type` tag, as on the wire.
            pub fn type_tag(&self) -> &'static str {
                match self { #(#type_arms,)* }
            }
            /// Whether a subscription carries this after `attached` (`x-event` in the schema).
            pub fn is_event(&self) -> bool {
                #is_event
            }
        }
    });
    Ok(items)
}

/// One variant of a tagged enum, as typify wrote it.
pub(crate) struct Variant {
    /// The variant's identifier (`CreatePty`).
    pub(crate) ident: syn::Ident,
    /// The tag on the wire (`create_pty`).
    pub(crate) tag: String,
    /// Its doc attributes.
    pub(crate) docs: Vec<syn::Attribute>,
    /// Its members, with their attributes; empty for a unit variant.
    pub(crate) fields: Vec<syn::Field>,
    /// Whether typify wrote it as a unit variant.
    unit: bool,
}

impl Variant {
    /// `CreatePtyRequest`, `SnapshotResponse`.
    pub(crate) fn struct_name(&self, suffix: &str) -> syn::Ident {
        format_ident!("{}{suffix}", self.ident)
    }

    /// `Request::Ping` or `Request::Get { .. }`.
    fn pattern(&self, enumeration: &str) -> syn::Pat {
        let (enumeration, ident) = (format_ident!("{enumeration}"), &self.ident);
        if self.unit { parse_quote!(#enumeration::#ident) } else { parse_quote!(#enumeration::#ident { .. }) }
    }

    /// The struct and its two conversions.
    fn conversions(&self, enumeration: &str, eq: &EqTypes) -> Vec<syn::Item> {
        let name = self.struct_name(enumeration);
        let enumeration = format_ident!("{enumeration}");
        let ident = &self.ident;
        let docs = &self.docs;
        let derive: syn::Attribute = if self.fields.iter().all(|f| eq.holds(&f.ty)) {
            parse_quote!(#[derive(Clone, Debug, PartialEq, Eq)])
        } else {
            parse_quote!(#[derive(Clone, Debug, PartialEq)])
        };
        if self.unit {
            return vec![
                parse_quote! { #(#docs)* #derive pub struct #name; },
                parse_quote! {
                    impl ::std::convert::From<#name> for #enumeration {
                        fn from(_: #name) -> Self { #enumeration::#ident }
                    }
                },
                parse_quote! {
                    impl ::std::convert::TryFrom<#enumeration> for #name {
                        type Error = #enumeration;
                        fn try_from(value: #enumeration) -> ::std::result::Result<Self, #enumeration> {
                            match value {
                                #enumeration::#ident => Ok(#name),
                                other => Err(other),
                            }
                        }
                    }
                },
            ];
        }
        let members: Vec<&syn::Ident> = self.fields.iter().filter_map(|f| f.ident.as_ref()).collect();
        let fields = self.fields.iter().map(|field| {
            let docs = field.attrs.iter().filter(|a| a.path().is_ident("doc"));
            let (member, ty) = (&field.ident, &field.ty);
            quote::quote! { #(#docs)* pub #member: #ty }
        });
        vec![
            parse_quote! { #(#docs)* #derive pub struct #name { #(#fields,)* } },
            parse_quote! {
                impl ::std::convert::From<#name> for #enumeration {
                    fn from(value: #name) -> Self {
                        let #name { #(#members),* } = value;
                        #enumeration::#ident { #(#members),* }
                    }
                }
            },
            parse_quote! {
                impl ::std::convert::TryFrom<#enumeration> for #name {
                    type Error = #enumeration;
                    fn try_from(value: #enumeration) -> ::std::result::Result<Self, #enumeration> {
                        match value {
                            #enumeration::#ident { #(#members),* } => Ok(#name { #(#members),* }),
                            other => Err(other),
                        }
                    }
                }
            },
        ]
    }
}

/// The variants of the enum `name` in `file`, in order.
pub(crate) fn variants(file: &syn::File, name: &str) -> Result<Vec<Variant>> {
    let enumeration = file
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Enum(e) if e.ident == name => Some(e),
            _ => None,
        })
        .with_context(|| format!("typify wrote no enum {name}"))?;
    enumeration
        .variants
        .iter()
        .map(|variant| {
            let tag = crate::rust::serde_rename(&variant.attrs)
                .with_context(|| format!("{name}::{} has no serde rename", variant.ident))?;
            let docs = variant.attrs.iter().filter(|a| a.path().is_ident("doc")).cloned().collect();
            let (fields, unit) = match &variant.fields {
                syn::Fields::Named(named) => (named.named.iter().cloned().collect(), false),
                syn::Fields::Unit => (Vec::new(), true),
                syn::Fields::Unnamed(_) => anyhow::bail!("{name}::{} is a tuple variant", variant.ident),
            };
            Ok(Variant { ident: variant.ident.clone(), tag, docs, fields, unit })
        })
        .collect()
}

/// Which of the generated module's own types derive `Eq`, to tell whether a member's type is `Eq`.
pub(crate) struct EqTypes {
    /// The module's structs and enums that do not derive `Eq`.
    not_eq: BTreeSet<String>,
}

impl EqTypes {
    /// Reads the derives of every struct and enum in `file`.
    pub(crate) fn of(file: &syn::File) -> EqTypes {
        let mut not_eq = BTreeSet::new();
        for item in &file.items {
            let (ident, attrs) = match item {
                syn::Item::Struct(s) => (&s.ident, &s.attrs),
                syn::Item::Enum(e) => (&e.ident, &e.attrs),
                _ => continue,
            };
            let derives_eq = attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
                let mut found = false;
                let _ = a.parse_nested_meta(|meta| {
                    found |= meta.path.is_ident("Eq");
                    Ok(())
                });
                found
            });
            if !derives_eq {
                not_eq.insert(ident.to_string());
            }
        }
        EqTypes { not_eq }
    }

    /// Whether `ty` is `Eq`: it mentions no floating point type and none of the module's non-`Eq` types.
    pub(crate) fn holds(&self, ty: &syn::Type) -> bool {
        let text = ty.to_token_stream().to_string();
        text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .all(|ident| !self.not_eq.contains(ident) && ident != "f32" && ident != "f64")
    }
}
