//! Emits `client-ts/src/generated/protocol.ts` from the types bundle.
//!
//! Objects become interfaces, string enums become unions of literals, and every `oneOf` of tagged objects
//! becomes one interface per variant plus a discriminated union (`Request` on `op`, `Response` on `type`,
//! `Lifecycle` on `status`). An object whose validation-only rule makes members depend on an enum member
//! (`if {mode: const pty} then {required pty, not pipe} else {...}`, as `ProcessInfo` has) becomes one interface
//! per enum value plus their union, so the compiler knows `pty` is present when `mode === "pty"`. A property
//! that is not required is optional (`name?: T`); a nullable one has `| null`; descriptions become TSDoc
//! comments. The protocol constants close the file: the version, the op and type lists, the op table (`ANSWERS`:
//! the response type that answers each op, from `x-answer`, and `AnswerTo<Op>`), the subscription events
//! (`EVENT_TYPES`, from `x-event`) and the texts peers share (`x-constants`).

use std::fmt::Write;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value};

use crate::bundle::Bundle;

/// The generated TypeScript module, from the types bundle and the validation bundle of the same schema (whose
/// validation-only rules say which objects are unions by an enum member).
pub fn generate(bundle: &Bundle, validation: &Bundle) -> Result<String> {
    let mut out = String::new();
    out.push_str(
        "/** Generated from `schema/` by `cargo run -p opencode-pty-codegen` (`just codegen`): do not edit by hand. \
         Change the schema and regenerate; `codegen/tests/drift.rs` fails while this file is stale. */\n",
    );
    for (name, schema) in bundle.definitions() {
        out.push('\n');
        let rules = validation.definitions().get(name);
        definition(&mut out, bundle, name, schema, rules).with_context(|| format!("definition {name}"))?;
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
    out.push_str(
        "\n/** The `type` of the response that answers each op (`x-answer`); an `error` may answer any request instead. */\n\
         export const ANSWERS = {\n",
    );
    for (op, answer) in &bundle.answers {
        let _ = writeln!(out, "  {op}: {answer:?},");
    }
    out.push_str(
        "} as const satisfies { readonly [Op in Request[\"op\"]]: Response[\"type\"] };\n\n\
         /** The types that may also answer an op (`x-answer-also`): `run`'s `command_running` after its timeout. */\n\
         export const OTHER_ANSWERS = {\n",
    );
    for (op, others) in &bundle.other_answers {
        let _ = writeln!(out, "  {op}: [{}],", list(others));
    }
    out.push_str(
        "} as const satisfies { readonly [Op in Request[\"op\"]]?: readonly Response[\"type\"][] };\n\n\
         /** The response that answers the op `Op` (its `x-answer`, or one of its `x-answer-also`). */\n\
         export type AnswerTo<Op extends Request[\"op\"]> = Extract<\n  Response,\n  { type: (typeof ANSWERS)[Op] | (Op extends keyof typeof OTHER_ANSWERS ? (typeof OTHER_ANSWERS)[Op][number] : never) }\n>;\n",
    );
    let events: Vec<String> = bundle.responses.iter().filter(|r| r.event).map(|r| r.tag.clone()).collect();
    let _ = write!(
        out,
        "\n/** The response and event `type`s a subscription carries after `attached` (`x-event`), in schema order. */\n\
         export const EVENT_TYPES = [{}] as const;\n",
        list(&events)
    );
    for constant in &bundle.constants {
        out.push('\n');
        doc(&mut out, &Value::String(constant.description.clone()), "");
        let _ = writeln!(out, "export const {} = {:?};", constant.name, constant.value);
    }
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

/// Emits one named definition; `rules` is the same definition in the validation bundle.
fn definition(out: &mut String, bundle: &Bundle, name: &str, schema: &Value, rules: Option<&Value>) -> Result<()> {
    doc(out, schema, "");
    if let Some(union) = discriminated(bundle, schema, rules)? {
        return discriminated_union(out, name, schema, &union);
    }
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

/// An object read as a union by one of its enum members: for each value of `property`, which other members
/// that value requires and which it forbids.
struct Discriminated {
    property: String,
    /// `(value, required, forbidden)` in the enum's order.
    variants: Vec<(String, Vec<String>, Vec<String>)>,
}

/// The union an object's validation-only `if`/`then`/`else` rule describes, if it has one of this shape:
/// `if` names one member with a string `const`, that member is an enum, and `then` and `else` only list
/// `required` members and `not: {required}` members. Any other rule leaves the object a plain interface.
fn discriminated(bundle: &Bundle, schema: &Value, rules: Option<&Value>) -> Result<Option<Discriminated>> {
    let Some(entries) = rules.and_then(|r| r.get("allOf")).and_then(Value::as_array) else { return Ok(None) };
    let names = |value: &Value| -> Option<Vec<String>> {
        match value {
            Value::Null => Some(Vec::new()),
            Value::Array(items) => items.iter().map(|i| i.as_str().map(str::to_owned)).collect(),
            _ => None,
        }
    };
    let branch = |value: &Value| -> Option<(Vec<String>, Vec<String>)> {
        let object = value.as_object()?;
        if object.keys().any(|k| k != "required" && k != "not") {
            return None;
        }
        let not = &value["not"];
        if not.as_object().is_some_and(|n| n.keys().any(|k| k != "required")) {
            return None;
        }
        Some((names(&value["required"])?, names(&not["required"])?))
    };
    for entry in entries {
        let Some(tested) = entry["if"]["properties"].as_object().filter(|p| p.len() == 1) else { continue };
        let Some((property, test)) = tested.iter().next() else { continue };
        let Some(value) = test.get("const").and_then(Value::as_str) else { continue };
        let (Some(then), Some(otherwise)) = (branch(&entry["then"]), branch(&entry["else"])) else { continue };
        let member = &schema["properties"][property.as_str()];
        let enumeration = match member.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let name = reference.strip_prefix("#/definitions/").context("only local references")?;
                bundle.definitions().get(name).and_then(|d| d.get("enum")).cloned()
            }
            None => member.get("enum").cloned(),
        };
        let Some(values) = enumeration.as_ref().and_then(&names) else { continue };
        ensure!(
            values.iter().any(|v| v == value),
            "the rule on `{property}` tests {value:?}, which is not one of its values"
        );
        let variants = values
            .into_iter()
            .map(|v| {
                let (required, forbidden) = if v == value { then.clone() } else { otherwise.clone() };
                (v, required, forbidden)
            })
            .collect();
        return Ok(Some(Discriminated { property: property.clone(), variants }));
    }
    Ok(None)
}

/// `export type Name = NameA | NameB;` and one interface per value of the discriminating member, in which that
/// member is the value's literal, the members it requires are required and the ones it forbids are `?: never`.
fn discriminated_union(out: &mut String, name: &str, schema: &Value, union: &Discriminated) -> Result<()> {
    let member = |value: &str| format!("{name}{}", pascal(value));
    let members = union.variants.iter().map(|(v, _, _)| member(v)).collect::<Vec<_>>().join(" | ");
    let _ = writeln!(out, "export type {name} = {members};");
    let empty = Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&empty);
    let required: Vec<&str> =
        schema["required"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    for (value, also_required, forbidden) in &union.variants {
        let _ = writeln!(out, "\n/** `{name}` when `{}` is `{value}`. */", union.property);
        let _ = writeln!(out, "export interface {} {{", member(value));
        for (property, property_schema) in properties {
            doc(out, property_schema, "  ");
            if *property == union.property {
                let _ = writeln!(out, "  {property}: {};", Value::String(value.clone()));
            } else if forbidden.contains(property) {
                let _ = writeln!(out, "  {property}?: never;");
            } else {
                let present = required.contains(&property.as_str()) || also_required.contains(property);
                let ty = ts_type(property_schema).with_context(|| format!("{name}.{property}"))?;
                let _ = writeln!(out, "  {property}{}: {ty};", if present { "" } else { "?" });
            }
        }
        out.push_str(
            "}
",
        );
    }
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
pub(crate) fn ts_type(schema: &Value) -> Result<String> {
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

/// A TSDoc comment from the schema's description, if it has one (or from a string standing for one).
pub(crate) fn doc(out: &mut String, schema: &Value, indent: &str) {
    let Some(description) = schema.as_str().or_else(|| schema.get("description").and_then(Value::as_str)) else {
        return;
    };
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
pub(crate) fn pascal(name: &str) -> String {
    name.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}
