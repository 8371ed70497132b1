//! The bounds the schema states against the constants of `limits.rs`: each per-field limit is written in both
//! places (the schema for validators and other languages, the constant for the daemon), and they must agree.

use opencode_pty_protocol::{
    DEFAULT_REPLAY_BYTES, DEFAULT_SCROLLBACK_LINES, MAX_REPLAY_BYTES, MAX_SCROLLBACK_LINES, MIN_REPLAY_BYTES,
};
use opencode_pty_protocol::{
    MAX_ARG_CHARS, MAX_ARGS, MAX_ATTACHMENT_ID_CHARS, MAX_COLS, MAX_COMMAND_LINE_BYTES, MAX_COMMAND_WAIT_MS,
    MAX_COMMANDS, MAX_GROUP_ID_CHARS, MAX_OPT_IN_ITEMS, MAX_PATH_CHARS, MAX_ROWS, MAX_RUN_COMMAND_BYTES,
    MAX_SHELL_CWD_BYTES, MAX_TITLE_CHARS, SCHEMA_JSON,
};
use serde_json::Value;

/// The properties of the request with this `op`.
fn request(schema: &Value, op: &str) -> Value {
    let variants = schema["definitions"]["Request"]["oneOf"].as_array().expect("Request variants");
    let variant = variants.iter().find(|v| v["properties"]["op"]["const"] == op).expect("the op");
    variant["properties"].clone()
}

/// A validation-only `allOf` bound (`maxLength`, `maxItems`) of a property.
fn bound(property: &Value, keyword: &str) -> usize {
    let rules = property["allOf"].as_array().unwrap_or_else(|| panic!("no allOf in {property}"));
    let rule = rules.iter().find_map(|r| r[keyword].as_u64()).unwrap_or_else(|| panic!("no {keyword}"));
    usize::try_from(rule).expect("fits")
}

#[test]
fn the_schema_states_the_same_limits_as_the_constants() {
    let schema: Value = serde_json::from_str(SCHEMA_JSON).expect("bundled schema");
    for op in ["create_pty", "resize", "control", "input"] {
        let properties = request(&schema, op);
        assert_eq!(properties["cols"]["maximum"], u64::from(MAX_COLS), "{op} cols");
        assert_eq!(properties["rows"]["maximum"], u64::from(MAX_ROWS), "{op} rows");
    }
    for op in ["create_pty", "create_pipe"] {
        let properties = request(&schema, op);
        assert_eq!(bound(&properties["program"], "maxLength"), MAX_PATH_CHARS);
        assert_eq!(bound(&properties["cwd"], "maxLength"), MAX_PATH_CHARS);
        assert_eq!(bound(&properties["group_id"], "maxLength"), MAX_GROUP_ID_CHARS);
        assert_eq!(bound(&properties["args"], "maxItems"), MAX_ARGS);
        assert_eq!(bound(&properties["args"]["items"], "maxLength"), MAX_ARG_CHARS);
    }
    assert_eq!(bound(&request(&schema, "create_pty")["title"], "maxLength"), MAX_TITLE_CHARS);
    assert_eq!(bound(&request(&schema, "rename")["title"], "maxLength"), MAX_TITLE_CHARS);
    assert_eq!(bound(&request(&schema, "create_pipe")["output_path"], "maxLength"), MAX_PATH_CHARS);
    for op in ["subscribe", "write", "resize", "control", "input"] {
        assert_eq!(bound(&request(&schema, op)["attachment_id"], "maxLength"), MAX_ATTACHMENT_ID_CHARS, "{op}");
    }
    for op in ["get", "list", "snapshot", "read_rows"] {
        assert_eq!(bound(&request(&schema, op)["features"], "maxItems"), MAX_OPT_IN_ITEMS, "{op}");
    }
    assert_eq!(bound(&request(&schema, "subscribe")["events"], "maxItems"), MAX_OPT_IN_ITEMS);
    assert_eq!(bound(&request(&schema, "upgrade")["program"], "maxLength"), MAX_PATH_CHARS);
}

/// A definition of the bundled schema.
fn definition<'a>(schema: &'a Value, name: &str) -> &'a Value {
    &schema["definitions"][name]["properties"]
}

#[test]
fn the_shell_integration_limits_agree_with_the_constants() {
    let schema: Value = serde_json::from_str(SCHEMA_JSON).expect("bundled schema");
    let commands = request(&schema, "commands");
    assert_eq!(commands["limit"]["maximum"], MAX_COMMANDS as u64);
    let answer = schema["definitions"]["Response"]["oneOf"]
        .as_array()
        .expect("Response variants")
        .iter()
        .find(|v| v["properties"]["type"]["const"] == "commands")
        .expect("the commands answer");
    assert_eq!(bound(&answer["properties"]["commands"], "maxItems"), MAX_COMMANDS);
    // The schema counts characters, the daemon bytes: a string within the bytes is within the characters.
    let command = definition(&schema, "ShellCommand");
    assert_eq!(bound(&command["command"], "maxLength"), MAX_COMMAND_LINE_BYTES);
    assert_eq!(bound(&command["cwd"], "maxLength"), MAX_SHELL_CWD_BYTES);
    assert_eq!(bound(&definition(&schema, "ShellState")["cwd"], "maxLength"), MAX_SHELL_CWD_BYTES);
    let run = request(&schema, "run");
    assert_eq!(bound(&run["command"], "maxLength"), MAX_RUN_COMMAND_BYTES);
    for op in ["run", "wait_command"] {
        assert_eq!(request(&schema, op)["timeout_ms"]["maximum"], u64::from(MAX_COMMAND_WAIT_MS), "{op}");
    }
}

#[test]
fn a_terminal_s_memory_bounds_agree_with_the_schema() {
    let schema: Value = serde_json::from_str(SCHEMA_JSON).expect("schema");
    let create = request(&schema, "create_pty");
    assert_eq!(create["scrollback_lines"]["minimum"], 0);
    assert_eq!(create["scrollback_lines"]["maximum"], u64::from(MAX_SCROLLBACK_LINES));
    assert_eq!(create["replay_bytes"]["minimum"], u64::from(MIN_REPLAY_BYTES));
    assert_eq!(create["replay_bytes"]["maximum"], u64::from(MAX_REPLAY_BYTES));
    let describes = |key: &str, value: u32| {
        let text = create[key]["description"].as_str().expect("description");
        assert!(text.contains(&format!("omitted or null: {value} ")), "{key}: {text}");
    };
    describes("scrollback_lines", DEFAULT_SCROLLBACK_LINES);
    describes("replay_bytes", DEFAULT_REPLAY_BYTES);
}
