//! Emits `client-ts/src/generated/views.ts`: the TypeScript client's own shapes of the responses it hands to
//! callers as values of their own (`x-client-view`), and the functions that build them from checked responses.
//!
//! A view has the response's members in camelCase, all `readonly`, with each base64 member (`x-bytes`) decoded
//! into a `Uint8Array` under its `x-bytes` name; a subscription event (`x-event`) keeps its `type` tag, and so does an
//! answer that shares its op with another answer type (`x-answer-also`); any other answer drops it. `<name>Of(response)` builds a view (a member left out stays left out; bad base64 throws
//! `ProtocolError` through `core/bytes.ts`), and `eventOf(response)` builds the view of any event, which is how
//! a subscription dispatches on what it reads.

use std::collections::BTreeSet;
use std::fmt::Write;

use anyhow::{Context, Result, ensure};
use serde_json::{Map, Value};

use crate::bundle::{Bundle, ResponseInfo};
use crate::typescript::{doc, pascal, ts_type};

/// The generated module.
pub fn generate(bundle: &Bundle) -> Result<String> {
    let variants = bundle.definitions()["Response"]["oneOf"].as_array().context("Response is a oneOf")?;
    let views: Vec<(&ResponseInfo, &Value)> =
        bundle.responses.iter().zip(variants).filter(|(info, _)| info.view).collect();
    for info in bundle.responses.iter().filter(|r| r.event) {
        ensure!(info.view, "the event {} needs x-client-view: subscriptions hand every event over as a view", info.tag);
    }

    let mut body = String::new();
    let mut imports = BTreeSet::new();
    // An answer that shares its op with another answer type (`x-answer-also`) keeps its tag, as events do, so
    // that the caller can tell them apart.
    let shared: BTreeSet<&str> = bundle
        .other_answers
        .iter()
        .flat_map(|(op, others)| {
            let answer = bundle.answers.iter().find(|(o, _)| o == op).map(|(_, answer)| answer.as_str());
            others.iter().map(String::as_str).chain(answer)
        })
        .collect();
    for (info, variant) in &views {
        let tagged = info.event || shared.contains(info.tag.as_str());
        view(&mut body, &mut imports, info, variant, tagged).with_context(|| format!("the view of {}", info.tag))?;
    }
    let events: Vec<&ResponseInfo> = views.iter().map(|(info, _)| *info).filter(|info| info.event).collect();
    if !events.is_empty() {
        imports.insert("Response".to_owned());
        let union = events.iter().map(|e| pascal(&e.tag)).collect::<Vec<_>>().join(" | ");
        let _ = write!(
            body,
            "\n/** A subscription event other than output, as the caller sees it (`x-event`). */\n\
             export type EventView = {union};\n\n\
             /** The caller's view of a subscription event, or null when `response` is not one. */\n\
             export function eventOf(response: Response): EventView | null {{\n  switch (response.type) {{\n"
        );
        for event in &events {
            let _ = writeln!(body, "    case {:?}:\n      return {}(response);", event.tag, function(&event.tag));
        }
        body.push_str("    default:\n      return null;\n  }\n}\n");
    }

    let mut out = String::from(
        "/** Generated from `schema/` by `cargo run -p opencode-pty-codegen` (`just codegen`): do not edit by hand. \
         The caller-facing shapes of the responses marked `x-client-view`: camelCase, base64 members as bytes. */\n\n",
    );
    if views.iter().any(|(info, _)| !info.bytes.is_empty()) {
        out.push_str("import { bytesOf } from \"../core/bytes.js\";\n");
    }
    if !imports.is_empty() {
        let names = imports.into_iter().collect::<Vec<_>>().join(", ");
        let _ = writeln!(out, "import type {{ {names} }} from \"./protocol.js\";");
    }
    out.push_str(&body);
    Ok(out)
}

/// The interface of one view and the function that builds it.
/// `tagged`: the view keeps the `type` tag.
fn view(
    out: &mut String,
    imports: &mut BTreeSet<String>,
    info: &ResponseInfo,
    variant: &Value,
    tagged: bool,
) -> Result<()> {
    let name = pascal(&info.tag);
    let wire = format!("{name}Response");
    imports.insert(wire.clone());
    let empty = Map::new();
    let properties = variant["properties"].as_object().unwrap_or(&empty);
    let required: Vec<&str> =
        variant["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();

    let mut members = String::new();
    let mut values = String::new();
    if tagged {
        let _ = writeln!(members, "  /** Tag: `{}`. */\n  readonly type: {:?};", info.tag, info.tag);
        let _ = writeln!(values, "    type: {:?},", info.tag);
    }
    for (member, schema) in properties.iter().filter(|(member, _)| *member != "type") {
        let optional = !required.contains(&member.as_str());
        let (field, ty, value) = match info.bytes_name(member) {
            Some(bytes) => {
                let mut described = schema.clone();
                let text = schema.get("description").and_then(Value::as_str).unwrap_or_default();
                described["description"] = Value::String(format!("Decoded from `{member}`: {text}"));
                doc(&mut members, &described, "  ");
                let value = format!("bytesOf(response.{member}, {:?})", format!("{}.{member}", info.tag));
                (camel(bytes), "Uint8Array".to_owned(), value)
            }
            None => {
                doc(&mut members, schema, "  ");
                references(schema, imports);
                (camel(member), ts_type(schema)?, format!("response.{member}"))
            }
        };
        let _ = writeln!(members, "  readonly {field}{}: {ty};", if optional { "?" } else { "" });
        if optional {
            let _ = writeln!(values, "    ...(response.{member} === undefined ? {{}} : {{ {field}: {value} }}),");
        } else {
            let _ = writeln!(values, "    {field}: {value},");
        }
    }

    out.push('\n');
    doc(out, variant, "");
    let _ = write!(out, "export interface {name} {{\n{members}}}\n\n");
    let _ = write!(
        out,
        "/** The caller's `{name}` from a checked `{tag}`. */\n\
         export function {function}(response: {wire}): {name} {{\n  return {{\n{values}  }};\n}}\n",
        tag = info.tag,
        function = function(&info.tag),
    );
    Ok(())
}

/// The names of the definitions `schema` refers to.
fn references(schema: &Value, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(object) => {
            if let Some(name) =
                object.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/definitions/"))
            {
                out.insert(name.to_owned());
            }
            object.iter().filter(|(key, _)| *key != "description").for_each(|(_, child)| references(child, out));
        }
        Value::Array(items) => items.iter().for_each(|item| references(item, out)),
        _ => {}
    }
}

/// `foreground_process_changed` -> `foregroundProcessChangedOf`.
fn function(tag: &str) -> String {
    format!("{}Of", camel(tag))
}

/// `cursor_x` -> `cursorX`.
fn camel(name: &str) -> String {
    let pascal = pascal(name);
    let mut chars = pascal.chars();
    chars.next().map(|c| c.to_ascii_lowercase().to_string() + chars.as_str()).unwrap_or_default()
}
