//! Loads `schema/`, resolves its cross-file `$ref`s into one document and checks the schema's conventions.
//!
//! The result has every shape under `definitions`: the roots of `protocol.json`, plus each `defs/` file used,
//! named after its file. Request and response files are copied inline into their unions (so the generators
//! see tagged variants), `x-inline` definitions are copied into each use, and, for the types bundle,
//! `x-validation-only` rules are dropped.
//!
//! The extensions that describe messages rather than shapes (`x-answer`, `x-event`, `x-client-view`, `x-bytes`
//! and `protocol.json`'s `x-constants`) are read into [`Bundle`]'s fields and removed from the document, so
//! validators and the runtime checks never see them. So is `x-absent-or-null`, a shape extension only the Rust
//! generator needs ([`Bundle::absent_or_null`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value, json};

/// What the bundle is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Input to the type generators: validation-only rules removed.
    Types,
    /// A schema to validate instances against: every rule kept.
    Validation,
}

/// The bundled schema and what the generators need besides it.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// `{"title", "description", "definitions": {...}}` with only local `#/definitions/...` references.
    pub document: Value,
    /// `x-protocol-version` of `protocol.json`.
    pub protocol_version: u64,
    /// `x-features` of `protocol.json`.
    pub features: Vec<String>,
    /// Request ops in `protocol.json` order.
    pub request_ops: Vec<String>,
    /// Response and event types in `protocol.json` order.
    pub response_types: Vec<String>,
    /// Each request op with the response type that answers it (`x-answer`), in `protocol.json` order.
    pub answers: Vec<(String, String)>,
    /// The ops that another response type may answer too (`x-answer-also`: `run` answers `command_running`
    /// when its timeout passes), with those types.
    pub other_answers: Vec<(String, Vec<String>)>,
    /// What the schema says about each response beyond its shape, in `protocol.json` order.
    pub responses: Vec<ResponseInfo>,
    /// `x-constants` of `protocol.json`, by name.
    pub constants: Vec<Constant>,
    /// The members marked `x-absent-or-null`, as `(definition, member)`: optional and nullable, where left out
    /// and `null` mean different things (Rust: `Option<Option<T>>`). Only members of `defs/` definitions.
    pub absent_or_null: Vec<(String, String)>,
}

/// A response or event type and its extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseInfo {
    /// The `type` tag.
    pub tag: String,
    /// `x-event`: a subscription carries it after `attached`.
    pub event: bool,
    /// `x-client-view`: the clients hand it to callers as a value of its own.
    pub view: bool,
    /// `x-bytes` of its members: `(member, name)`, a base64 member the clients decode into bytes called `name`.
    pub bytes: Vec<(String, String)>,
}

impl ResponseInfo {
    /// The name of the bytes a base64 member decodes into, if `member` is one.
    pub fn bytes_name(&self, member: &str) -> Option<&str> {
        self.bytes.iter().find(|(m, _)| m == member).map(|(_, name)| name.as_str())
    }
}

/// A string constant peers share outside the message types (`x-constants`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constant {
    /// `SCREAMING_SNAKE_CASE`.
    pub name: String,
    /// The exact text.
    pub value: String,
    /// The doc comment.
    pub description: String,
}

/// The extension keys read into [`Bundle`]'s fields and removed from the document.
const MESSAGE_EXTENSIONS: [&str; 6] =
    ["x-answer", "x-answer-also", "x-event", "x-client-view", "x-bytes", ABSENT_OR_NULL];

/// The extension that marks a member whose absence and `null` differ.
const ABSENT_OR_NULL: &str = "x-absent-or-null";

impl Bundle {
    /// The bundled definitions.
    pub fn definitions(&self) -> &Map<String, Value> {
        self.document["definitions"].as_object().expect("a bundle always has definitions")
    }
}

/// Bundles `schema_dir/protocol.json`.
pub fn load(schema_dir: &Path, purpose: Purpose) -> Result<Bundle> {
    let root_path = schema_dir.join("protocol.json");
    let root = read(&root_path)?;
    let mut bundler = Bundler { schema_dir: schema_dir.to_path_buf(), purpose, named: BTreeMap::new() };
    let roots = root["definitions"].as_object().context("protocol.json has no definitions")?;
    let mut definitions = Map::new();
    for (name, schema) in roots {
        // A root that is a bare reference to a file is that file's content under the root's name.
        let resolved = match schema.get("$ref").and_then(Value::as_str) {
            Some(target) if schema.as_object().is_some_and(|o| o.len() == 1) => {
                let file = root_path.parent().unwrap_or(schema_dir).join(target);
                bundler.resolve(&read(&file)?, &file)?
            }
            _ => bundler.resolve(schema, &root_path)?,
        };
        definitions.insert(name.clone(), resolved);
    }
    for (name, schema) in std::mem::take(&mut bundler.named) {
        ensure!(!definitions.contains_key(&name), "defs/{name}.json clashes with a root of the same name");
        definitions.insert(name, schema.context("a definition refers to itself")?);
    }
    let request_ops = union_tags(&definitions, "Request", "op")?;
    let response_types = union_tags(&definitions, "Response", "type")?;
    check_descriptions(&definitions)?;
    check_bytes(&Value::Object(definitions.clone()), "")?;
    let answers = answers(&definitions, &request_ops, &response_types)?;
    let other_answers = other_answers(&definitions, &request_ops, &response_types)?;
    let responses = responses(&definitions, &response_types)?;
    let constants = constants(&root)?;
    let absent_or_null = absent_or_null(&definitions)?;
    let mut definitions = Value::Object(definitions);
    strip(&mut definitions, &MESSAGE_EXTENSIONS);
    let protocol_version = root["x-protocol-version"].as_u64().context("protocol.json needs x-protocol-version")?;
    let features = root["x-features"]
        .as_array()
        .context("protocol.json needs x-features")?
        .iter()
        .map(|f| f.as_str().map(str::to_owned).context("x-features holds strings"))
        .collect::<Result<_>>()?;
    let document = json!({
        "title": root["title"],
        "description": root["description"],
        "definitions": definitions,
    });
    Ok(Bundle {
        document,
        protocol_version,
        features,
        request_ops,
        response_types,
        answers,
        other_answers,
        responses,
        constants,
        absent_or_null,
    })
}

struct Bundler {
    schema_dir: PathBuf,
    purpose: Purpose,
    /// Named definitions from `defs/`, `None` while being resolved (to catch cycles).
    named: BTreeMap<String, Option<Value>>,
}

impl Bundler {
    /// Resolves every `$ref` in `value`, which was read from `file`.
    fn resolve(&mut self, value: &Value, file: &Path) -> Result<Value> {
        match value {
            Value::Array(items) => items.iter().map(|v| self.resolve(v, file)).collect::<Result<_>>().map(Value::Array),
            Value::Object(object) => {
                if let Some(target) = object.get("$ref").and_then(Value::as_str) {
                    return self.reference(target, object.get("description"), file);
                }
                let mut out = Map::new();
                for (key, child) in object {
                    if key == "allOf" {
                        let kept = self.all_of(child, file)?;
                        if !kept.is_empty() {
                            out.insert(key.clone(), Value::Array(kept));
                        }
                    } else {
                        out.insert(key.clone(), self.resolve(child, file)?);
                    }
                }
                Ok(Value::Object(out))
            }
            other => Ok(other.clone()),
        }
    }

    /// `allOf` entries, less the validation-only ones when bundling for types.
    fn all_of(&mut self, entries: &Value, file: &Path) -> Result<Vec<Value>> {
        let entries = entries.as_array().with_context(|| format!("{}: allOf must be an array", file.display()))?;
        let mut kept = Vec::new();
        for entry in entries {
            let validation_only = entry.get("x-validation-only").and_then(Value::as_bool).unwrap_or(false);
            if validation_only && self.purpose == Purpose::Types {
                continue;
            }
            let mut entry = self.resolve(entry, file)?;
            if let Some(object) = entry.as_object_mut() {
                object.remove("x-validation-only");
            }
            kept.push(entry);
        }
        Ok(kept)
    }

    /// Replaces a `$ref` (with an optional sibling description) by what it stands for in the bundle.
    fn reference(&mut self, target: &str, description: Option<&Value>, file: &Path) -> Result<Value> {
        let (path, pointer) = target.split_once('#').unwrap_or((target, ""));
        let base = file.parent().unwrap_or(&self.schema_dir);
        let path = if path.is_empty() { file.to_path_buf() } else { normalize(&base.join(path)) };
        let relative = path.strip_prefix(&self.schema_dir).unwrap_or(&path).to_path_buf();
        let with_description = |mut value: Value| {
            if let (Some(description), Some(object)) = (description, value.as_object_mut()) {
                object.insert("description".into(), description.clone());
            }
            value
        };
        // A root of protocol.json, by pointer.
        if relative == Path::new("protocol.json") {
            let name = pointer.strip_prefix("/definitions/").with_context(|| format!("unsupported $ref {target}"))?;
            return Ok(with_description(json!({ "$ref": format!("#/definitions/{name}") })));
        }
        ensure!(
            pointer.is_empty() || pointer == "/",
            "{}: $ref {target}: only whole files can be referenced",
            file.display()
        );
        let content = read(&path)?;
        let inline = content.get("x-inline").and_then(Value::as_bool).unwrap_or(false);
        let in_defs = relative.starts_with("defs");
        if inline || !in_defs {
            // Copied into the use: an x-inline plain value, or a request/response variant.
            let mut resolved = self.resolve(&content, &path)?;
            if let Some(object) = resolved.as_object_mut() {
                object.remove("x-inline");
            }
            return Ok(with_description(resolved));
        }
        let name = path.file_stem().and_then(|s| s.to_str()).context("definition file name")?.to_owned();
        if !self.named.contains_key(&name) {
            self.named.insert(name.clone(), None);
            let resolved = self.resolve(&content, &path)?;
            self.named.insert(name.clone(), Some(resolved));
        }
        Ok(with_description(json!({ "$ref": format!("#/definitions/{name}") })))
    }
}

/// Lexically removes `.` and `..` components.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn read(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// The tag values of a union's variants, checking that each variant requires its tag as a string const.
fn union_tags(definitions: &Map<String, Value>, union: &str, tag: &str) -> Result<Vec<String>> {
    let variants = definitions[union]["oneOf"].as_array().with_context(|| format!("{union} must be a oneOf"))?;
    let mut tags = Vec::new();
    for (i, variant) in variants.iter().enumerate() {
        let value = variant["properties"][tag]["const"].as_str();
        let required = variant["required"].as_array().is_some_and(|r| r.iter().any(|k| k == tag));
        let Some(value) = value.filter(|_| required) else {
            bail!("{union} variant {i} must require `{tag}` as a string const (else it turns into an untagged enum)");
        };
        ensure!(!tags.iter().any(|t| t == value), "{union} has two variants tagged {value}");
        tags.push(value.to_owned());
    }
    Ok(tags)
}

/// Every definition and every property has a description: they become the generated doc comments.
fn check_descriptions(definitions: &Map<String, Value>) -> Result<()> {
    fn walk(value: &Value, at: &str) -> Result<()> {
        let Some(object) = value.as_object() else { return Ok(()) };
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                let path = format!("{at}.{name}");
                // A tag's const explains itself; everything else needs words.
                let is_tag = property.get("const").is_some();
                ensure!(is_tag || property.get("description").is_some(), "{path} has no description");
                walk(property, &path)?;
            }
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            for (i, child) in object.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
                walk(child, &format!("{at}.{key}[{i}]"))?;
            }
        }
        if let Some(items) = object.get("items") {
            walk(items, &format!("{at}[]"))?;
        }
        Ok(())
    }
    for (name, definition) in definitions {
        ensure!(definition.get("description").is_some(), "definition {name} has no description");
        walk(definition, name)?;
    }
    Ok(())
}

/// Each op with its `x-answer`, which every request must have and which must name a response type.
fn answers(definitions: &Map<String, Value>, ops: &[String], types: &[String]) -> Result<Vec<(String, String)>> {
    let variants = definitions["Request"]["oneOf"].as_array().context("Request must be a oneOf")?;
    let mut answers = Vec::new();
    for (op, variant) in ops.iter().zip(variants) {
        let answer = variant.get("x-answer").and_then(Value::as_str);
        let answer =
            answer.with_context(|| format!("request {op} needs `x-answer`: the response type that answers it"))?;
        ensure!(types.iter().any(|t| t == answer), "request {op}: x-answer {answer:?} is not a response type");
        for key in ["x-event", "x-client-view"] {
            ensure!(variant.get(key).is_none(), "request {op}: {key} belongs on responses");
        }
        answers.push((op.clone(), answer.to_owned()));
    }
    Ok(answers)
}

/// Each op's `x-answer-also`: response types that may answer it besides its `x-answer`.
fn other_answers(
    definitions: &Map<String, Value>,
    ops: &[String],
    types: &[String],
) -> Result<Vec<(String, Vec<String>)>> {
    let variants = definitions["Request"]["oneOf"].as_array().context("Request must be a oneOf")?;
    let mut others = Vec::new();
    for (op, variant) in ops.iter().zip(variants) {
        let Some(also) = variant.get("x-answer-also") else { continue };
        let also: Vec<String> = also
            .as_array()
            .with_context(|| format!("request {op}: x-answer-also must be an array of response types"))?
            .iter()
            .map(|t| t.as_str().map(str::to_owned).context("x-answer-also holds strings"))
            .collect::<Result<_>>()?;
        for answer in &also {
            ensure!(types.contains(answer), "request {op}: x-answer-also {answer:?} is not a response type");
        }
        others.push((op.clone(), also));
    }
    Ok(others)
}

/// Each response's `x-event`, `x-client-view` and the `x-bytes` of its members.
fn responses(definitions: &Map<String, Value>, types: &[String]) -> Result<Vec<ResponseInfo>> {
    let variants = definitions["Response"]["oneOf"].as_array().context("Response must be a oneOf")?;
    let flag = |variant: &Value, tag: &str, key: &str| -> Result<bool> {
        match variant.get(key) {
            None => Ok(false),
            Some(Value::Bool(set)) => Ok(*set),
            Some(other) => bail!("response {tag}: {key} must be true or false, not {other}"),
        }
    };
    let mut infos = Vec::new();
    for (tag, variant) in types.iter().zip(variants) {
        ensure!(variant.get("x-answer").is_none(), "response {tag}: x-answer belongs on requests");
        let mut bytes = Vec::new();
        for (member, property) in variant["properties"].as_object().into_iter().flatten() {
            if let Some(name) = property.get("x-bytes").and_then(Value::as_str) {
                bytes.push((member.clone(), name.to_owned()));
            }
        }
        let (event, view) = (flag(variant, tag, "x-event")?, flag(variant, tag, "x-client-view")?);
        infos.push(ResponseInfo { tag: tag.clone(), event, view, bytes });
    }
    Ok(infos)
}

/// Every `*_base64` member carries `x-bytes` (the name of what it decodes into), and only string members do.
fn check_bytes(value: &Value, at: &str) -> Result<()> {
    let Some(object) = value.as_object() else {
        for (i, item) in value.as_array().into_iter().flatten().enumerate() {
            check_bytes(item, &format!("{at}[{i}]"))?;
        }
        return Ok(());
    };
    for (name, property) in object.get("properties").and_then(Value::as_object).into_iter().flatten() {
        let path = format!("{at}.{name}");
        match property.get("x-bytes") {
            Some(Value::String(bytes)) => {
                ensure!(property["type"] == "string", "{path}: x-bytes is for string members");
                ensure!(snake_case(bytes), "{path}: x-bytes {bytes:?} must be a snake_case name");
            }
            Some(other) => bail!("{path}: x-bytes must be a name, not {other}"),
            None => {
                ensure!(!name.ends_with("_base64"), "{path} needs `x-bytes`: the name of the bytes it decodes into")
            }
        }
    }
    for (key, child) in object {
        let path = if key == "properties" { at.to_owned() } else { format!("{at}.{key}") };
        check_bytes(child, &path)?;
    }
    Ok(())
}

fn snake_case(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `x-constants` of `protocol.json`: `{"NAME": {"value": "...", "description": "..."}}`; none is fine.
fn constants(root: &Value) -> Result<Vec<Constant>> {
    let mut constants = Vec::new();
    for (name, constant) in root.get("x-constants").and_then(Value::as_object).into_iter().flatten() {
        let screaming = name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        ensure!(screaming && !name.is_empty(), "x-constants: {name:?} must be SCREAMING_SNAKE_CASE");
        let value = constant["value"].as_str().with_context(|| format!("x-constants.{name} needs a string value"))?;
        let description =
            constant["description"].as_str().with_context(|| format!("x-constants.{name} needs a description"))?;
        constants.push(Constant { name: name.clone(), value: value.to_owned(), description: description.to_owned() });
    }
    Ok(constants)
}

/// The `x-absent-or-null` members of the definitions, each checked: a member of a named definition's
/// `properties` (not of a request or response, whose generated variants are another shape), not required, and
/// nullable (`"type": [..., "null"]`, or a `oneOf` with `{"type": "null"}`).
fn absent_or_null(definitions: &Map<String, Value>) -> Result<Vec<(String, String)>> {
    fn count(value: &Value) -> usize {
        match value {
            Value::Object(object) => {
                usize::from(object.contains_key(ABSENT_OR_NULL)) + object.values().map(count).sum::<usize>()
            }
            Value::Array(items) => items.iter().map(count).sum(),
            _ => 0,
        }
    }
    let mut members = Vec::new();
    for (name, definition) in definitions {
        let required = |member: &str| definition["required"].as_array().is_some_and(|r| r.iter().any(|k| k == member));
        for (member, property) in definition.get("properties").and_then(Value::as_object).into_iter().flatten() {
            match property.get(ABSENT_OR_NULL) {
                None => continue,
                Some(Value::Bool(true)) => {}
                Some(other) => bail!("{name}.{member}: {ABSENT_OR_NULL} must be true, not {other}"),
            }
            let nullable = property["type"].as_array().is_some_and(|types| types.iter().any(|t| t == "null"))
                || property["oneOf"].as_array().is_some_and(|variants| variants.iter().any(|v| v["type"] == "null"));
            ensure!(!required(member), "{name}.{member}: an {ABSENT_OR_NULL} member cannot be required");
            ensure!(nullable, "{name}.{member}: an {ABSENT_OR_NULL} member must be nullable");
            members.push((name.clone(), member.clone()));
        }
    }
    let marked: usize = definitions.values().map(count).sum();
    ensure!(
        marked == members.len(),
        "{ABSENT_OR_NULL} is only for members of a defs/ definition's properties ({marked} marked, {} such)",
        members.len()
    );
    Ok(members)
}

/// Removes `keys` from every object in `value`.
fn strip(value: &mut Value, keys: &[&str]) {
    match value {
        Value::Object(object) => {
            for key in keys {
                object.remove(*key);
            }
            object.values_mut().for_each(|child| strip(child, keys));
        }
        Value::Array(items) => items.iter_mut().for_each(|child| strip(child, keys)),
        _ => {}
    }
}
