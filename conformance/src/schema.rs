//! Validation of every frame a daemon sends against the bundled schema (`schema/`, as
//! `opencode_pty_protocol::SCHEMA_JSON`): control frames as `Response`, output frames as `OutputFrame`.

use base64::Engine;
use serde_json::{Value, json};

/// Why the schema could not be loaded, or refused a frame.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SchemaError {
    #[error("the bundled schema is not JSON: {0}")]
    NotJson(serde_json::Error),
    /// The validator for `root` could not be built (the reason as the validator words it).
    #[error("the bundled schema for {root}: {reason}")]
    Invalid { root: String, reason: String },
    /// A frame from the daemon does not fit; `errors` are the validator's first few complaints.
    #[error("the daemon sent a {what} the schema refuses: {frame}: {}", errors.join("; "))]
    Refused { what: &'static str, frame: Value, errors: Vec<String> },
}

/// Validators for the two kinds of frame a daemon sends.
#[derive(Debug)]
pub(crate) struct Schema {
    response: jsonschema::Validator,
    output: jsonschema::Validator,
}

/// A validator for one root definition of the bundled schema.
fn validator(root: &str) -> Result<jsonschema::Validator, SchemaError> {
    let mut schema: Value = serde_json::from_str(opencode_pty_protocol::SCHEMA_JSON).map_err(SchemaError::NotJson)?;
    schema["allOf"] = json!([{ "$ref": format!("#/definitions/{root}") }]);
    jsonschema::draft7::new(&schema).map_err(|e| SchemaError::Invalid { root: root.to_owned(), reason: e.to_string() })
}

impl Schema {
    pub(crate) fn load() -> Result<Schema, SchemaError> {
        Ok(Schema { response: validator("Response")?, output: validator("OutputFrame")? })
    }

    /// A control frame from the daemon must be a valid `Response` (responses, events and errors alike).
    pub(crate) fn check_response(&self, frame: &Value) -> Result<(), SchemaError> {
        check(&self.response, frame, "control frame")
    }

    /// An output frame, in the JSON form the schema gives it.
    pub(crate) fn check_output(&self, start: u64, bytes: &[u8]) -> Result<(), SchemaError> {
        let frame = json!({
            "type": "output",
            "start": start,
            "end": start + bytes.len() as u64,
            "data_base64": base64::engine::general_purpose::STANDARD.encode(bytes),
        });
        check(&self.output, &frame, "output frame")
    }
}

fn check(validator: &jsonschema::Validator, frame: &Value, what: &'static str) -> Result<(), SchemaError> {
    let errors: Vec<String> =
        validator.iter_errors(frame).take(5).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    if errors.is_empty() { Ok(()) } else { Err(SchemaError::Refused { what, frame: frame.clone(), errors }) }
}
