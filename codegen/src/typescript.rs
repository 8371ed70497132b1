//! Emits `client-ts/src/generated/protocol.ts` from the types bundle.
//!
//! Objects become interfaces, string enums become unions of literals, and every `oneOf` of tagged objects
//! becomes one interface per variant plus a discriminated union (`Request` on `op`, `Response` on `type`,
//! `Lifecycle` on `status`). A property that is not required is optional (`name?: T`); a nullable one has
//! `| null`; descriptions become TSDoc comments. The protocol constants close the file.

use std::fmt::Write;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use crate::bundle::Bundle;

/// The generated TypeScript module.
pub fn generate(bundle: &Bundle) -> Result<String> {
    let mut out = String::new();
    out.push_str(
        "/** Generated from `schema/` by `cargo run -p opencode-pty-codegen` (`just codegen`): do not edit by hand. \
         Change the schema and regenerate; `codegen/tests/drift.rs` fails while this file is stale. */\n",
    );
    for (name, schema) in bundle.definitions() {
        out.push('\n');
        definition(&mut out, name, schema).with_context(|| format!("definition {name}"))?;
    }
    let list = |items: &[String]| items.iter().map(|i| format!("{i:?}")).collect::<Vec<_>>().join(", ");
    let _ = write!(
        out,
        "\n/** The protocol version (`x-protocol-version` of `schema/protocol.json`). */\n\
         export const PROTOCOL_VERSION = {} as const;\n\n\
         /** Additive capabilities of this protocol version (`x-features`). */\n\
         export const FEATURES: readonly string[] = [{}];\n\n\
         /** Every request `op`, in schema order. */\n\
         export const REQUEST_OPS = [{}] as const;\n\n\
         /** Every response and event `type`, in schema order. */\n\
         export const RESPONSE_TYPES = [{}] as const;\n",
        bundle.protocol_version,
        list(&bundle.features),
        list(&bundle.request_ops),
        list(&bundle.response_types),
    );
    Ok(out)
}

/// Emits `client-ts/src/generated/schema.ts`: the validation bundle as a constant the client checks every
/// response against at runtime, so the checks have the schema as their one source. Annotations (`description`,
/// `title`, `format`) are dropped; every rule is kept.
pub fn generate_schema(bundle: &Bundle) -> Result<String> {
    let definitions = Value::Object(bundle.definitions().clone());
    let rules = serde_json::to_string_pretty(&strip_annotations(&definitions))?;
    Ok(format!(
        "/** Generated from `schema/` by `cargo run -p opencode-pty-codegen` (`just codegen`): do not edit by hand. \
         The bundled schema with its validation rules and without annotations, for the client's runtime checks. */\n\n\
         /** Every definition of the bundled schema (JSON Schema draft-07, local `#/definitions/...` references). */\n\
         export const SCHEMA_DEFINITIONS: Readonly<Record<string, unknown>> = {rules};\n"
    ))
}

/// A schema without its annotation keywords; property names under `properties` are kept whatever they are.
fn strip_annotations(schema: &Value) -> Value {
    match schema {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(key, _)| !matches!(key.as_str(), "description" | "title" | "format"))
                .map(|(key, child)| {
                    let child = if key == "properties" || key == "definitions" {
                        match child {
                            Value::Object(named) => Value::Object(
                                named.iter().map(|(name, s)| (name.clone(), strip_annotations(s))).collect(),
                            ),
                            other => other.clone(),
                        }
                    } else {
                        strip_annotations(child)
                    };
                    (key.clone(), child)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_annotations).collect()),
        other => other.clone(),
    }
}

/// Emits one named definition.
fn definition(out: &mut String, name: &str, schema: &Value) -> Result<()> {
    doc(out, schema, "");
    if let Some(variants) = schema.get("oneOf").and_then(Value::as_array)
        && variants.iter().all(|v| v.get("properties").is_some())
    {
        let tag = tag_of(variants).with_context(|| format!("{name}: a union of objects needs a const tag"))?;
        let suffix = if matches!(name, "Request" | "Response") { name } else { "" };
        let prefix = if suffix.is_empty() { name } else { "" };
        let mut members = Vec::new();
        for variant in variants {
            let value = variant["properties"][tag]["const"].as_str().context("tag const")?;
            members.push((format!("{prefix}{}{suffix}", pascal(value)), variant));
        }
        let union = members.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>().join(" | ");
        let _ = writeln!(out, "export type {name} = {union};");
        for (member, variant) in members {
            out.push('\n');
            doc(out, variant, "");
            interface(out, &member, variant)?;
        }
        return Ok(());
    }
    if schema.get("properties").is_some() {
        return interface(out, name, schema);
    }
    let _ = writeln!(out, "export type {name} = {};", ts_type(schema)?);
    Ok(())
}

/// The property every variant requires as a string const.
fn tag_of(variants: &[Value]) -> Option<&str> {
    let first = variants.first()?;
    let candidates = first["properties"].as_object()?;
    candidates.keys().map(String::as_str).find(|key| {
        variants.iter().all(|v| {
            v["properties"][*key]["const"].is_string()
                && v["required"].as_array().is_some_and(|r| r.iter().any(|k| k == *key))
        })
    })
}

/// `export interface name { ... }` for an object schema.
fn interface(out: &mut String, name: &str, schema: &Value) -> Result<()> {
    let empty = Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&empty);
    let required: Vec<&str> =
        schema["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let _ = writeln!(out, "export interface {name} {{");
    for (property, property_schema) in properties {
        doc(out, property_schema, "  ");
        let optional = if required.contains(&property.as_str()) { "" } else { "?" };
        let ty = ts_type(property_schema).with_context(|| format!("{name}.{property}"))?;
        let _ = writeln!(out, "  {property}{optional}: {ty};");
    }
    out.push_str("}\n");
    Ok(())
}

/// The TypeScript type of a schema used in place.
fn ts_type(schema: &Value) -> Result<String> {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return reference.strip_prefix("#/definitions/").map(str::to_owned).context("only local references");
    }
    if let Some(value) = schema.get("const") {
        return Ok(value.to_string());
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Ok(values.iter().map(Value::to_string).collect::<Vec<_>>().join(" | "));
    }
    if let Some(variants) = schema.get("oneOf").and_then(Value::as_array) {
        return Ok(variants.iter().map(ts_type).collect::<Result<Vec<_>>>()?.join(" | "));
    }
    match &schema["type"] {
        Value::String(single) => single_type(single, schema),
        Value::Array(types) => Ok(types
            .iter()
            .map(|t| single_type(t.as_str().context("type names are strings")?, schema))
            .collect::<Result<Vec<_>>>()?
            .join(" | ")),
        _ => bail!("a schema without a type: {schema}"),
    }
}

fn single_type(name: &str, schema: &Value) -> Result<String> {
    Ok(match name {
        "string" => "string".into(),
        "integer" | "number" => "number".into(),
        "boolean" => "boolean".into(),
        "null" => "null".into(),
        "array" => {
            let item = ts_type(&schema["items"])?;
            if item.contains(' ') { format!("({item})[]") } else { format!("{item}[]") }
        }
        "object" if schema.get("properties").is_some() => bail!("nested object types need a definition"),
        "object" => match schema.get("additionalProperties") {
            Some(value @ Value::Object(_)) => format!("Record<string, {}>", ts_type(value)?),
            _ => "Record<string, unknown>".into(),
        },
        other => bail!("unknown JSON type {other}"),
    })
}

/// A TSDoc comment from the schema's description, if it has one.
fn doc(out: &mut String, schema: &Value, indent: &str) {
    let Some(description) = schema.get("description").and_then(Value::as_str) else { return };
    let text = description.replace("*/", "* /");
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() == 1 {
        let _ = writeln!(out, "{indent}/** {} */", lines[0]);
        return;
    }
    let _ = writeln!(out, "{indent}/**");
    for line in lines {
        let _ = writeln!(out, "{indent} * {line}");
    }
    let _ = writeln!(out, "{indent} */");
}

/// `read_rows` -> `ReadRows`.
fn pascal(name: &str) -> String {
    name.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}
