//! Validation of every frame a daemon sends against the bundled schema (`schema/`, as
//! `opencode_pty_protocol::SCHEMA_JSON`): control frames as `Response`, output frames as `OutputFrame`.

use base64::Engine;
use serde_json::{Value, json};

/// Validators for the two kinds of frame a daemon sends.
#[derive(Debug)]
pub struct Schema {
    response: jsonschema::Validator,
    output: jsonschema::Validator,
}

/// A validator for one root definition of the bundled schema.
fn validator(root: &str) -> Result<jsonschema::Validator, String> {
    let mut schema: Value = serde_json::from_str(opencode_pty_protocol::SCHEMA_JSON)
        .map_err(|e| format!("the bundled schema is not JSON: {e}"))?;
    schema["allOf"] = json!([{ "$ref": format!("#/definitions/{root}") }]);
    jsonschema::draft7::new(&schema).map_err(|e| format!("the bundled schema for {root}: {e}"))
}

impl Schema {
    pub fn load() -> Result<Schema, String> {
        Ok(Schema { response: validator("Response")?, output: validator("OutputFrame")? })
    }

    /// A control frame from the daemon must be a valid `Response` (responses, events and errors alike).
    pub fn check_response(&self, frame: &Value) -> Result<(), String> {
        check(&self.response, frame, "control frame")
    }

    /// An output frame, in the JSON form the schema gives it.
    pub fn check_output(&self, start: u64, bytes: &[u8]) -> Result<(), String> {
        let frame = json!({
            "type": "output",
            "start": start,
            "end": start + bytes.len() as u64,
            "data_base64": base64::engine::general_purpose::STANDARD.encode(bytes),
        });
        check(&self.output, &frame, "output frame")
    }
}

fn check(validator: &jsonschema::Validator, frame: &Value, what: &str) -> Result<(), String> {
    let errors: Vec<String> =
        validator.iter_errors(frame).take(5).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("the daemon sent a {what} the schema refuses: {frame}: {}", errors.join("; ")))
    }
}
