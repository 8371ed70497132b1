//! Patterns in expected frames and variables in sent ones: `"{...}"` matches any value, `"[..]"` inside a
//! string matches any run of characters, `"$name"` binds a value the first time and must match it later,
//! and `${name}` inside a string stands for a bound value. Also which error messages the protocol fixes: the
//! others are matched as any text unless the run asks for `--strict-messages`.

use std::collections::BTreeMap;

use serde_json::Value;

/// The value pattern that matches anything.
pub(crate) const ANY_VALUE: &str = "{...}";
/// The string pattern that matches any run of characters.
pub(crate) const ANY_TEXT: &str = "[..]";

/// Why a value could not be filled in, or does not match what a transcript expects. Each names where, by a
/// JSON path from `$`, when it is about a frame.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MatchError {
    /// `${` without its closing `}` in `text`.
    #[error("unclosed ${{ in {text:?}")]
    Unclosed { text: String },
    /// `${name}` inside a string, with nothing bound to `name`.
    #[error("${{{name}}} is not bound")]
    UnboundInText { name: String },
    /// A whole value `$name`, with nothing bound to `name`.
    #[error("${name} is not bound")]
    Unbound { name: String },
    /// A pattern at `path` could not be filled in.
    #[error("{path}: {error}")]
    InPattern { path: String, error: Box<MatchError> },
    #[error("{path}: expected ${name} = {bound}, got {actual}")]
    CaptureDiffers { path: String, name: String, bound: Value, actual: Value },
    #[error("{path}: expected {expected}, got {actual}")]
    Differs { path: String, expected: Value, actual: Value },
    #[error("{path}: expected an array, got {actual}")]
    NotAnArray { path: String, actual: Value },
    #[error("{path}: expected {expected} items, got {got}")]
    Length { path: String, expected: usize, got: usize },
    #[error("{path}: expected an object, got {actual}")]
    NotAnObject { path: String, actual: Value },
    #[error("{path}: member `{member}` is missing")]
    Missing { path: String, member: String },
    #[error("{path}: unexpected member `{member}`")]
    Unexpected { path: String, member: String },
}

/// Named values: the runner's own (`token`, `instance_id`, `daemon_pid`, `features`, `tmp`) and captures.
pub(crate) type Bindings = BTreeMap<String, Value>;

/// `Some(name)` when `s` is a whole-value variable or capture, `$name`.
fn whole_variable(s: &str) -> Option<&str> {
    let name = s.strip_prefix('$')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() || first == '_')
        .then_some(())
        .filter(|()| chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .map(|()| name)
}

/// The text form of a bound value inside a string.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Replaces each `${name}` in `s` by its bound value; `$$` stands for one `$`.
pub(crate) fn interpolate(s: &str, vars: &Bindings) -> Result<String, MatchError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(inner) = after.strip_prefix('{') {
            let Some(close) = inner.find('}') else { return Err(MatchError::Unclosed { text: s.to_owned() }) };
            let name = &inner[..close];
            let value = vars.get(name).ok_or_else(|| MatchError::UnboundInText { name: name.to_owned() })?;
            out.push_str(&text_of(value));
            rest = &inner[close + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The value to send for a value written in a transcript: variables replaced by what they are bound to.
pub(crate) fn substitute(value: &Value, vars: &Bindings) -> Result<Value, MatchError> {
    Ok(match value {
        Value::String(s) => match whole_variable(s) {
            Some(name) => vars.get(name).cloned().ok_or_else(|| MatchError::Unbound { name: name.to_owned() })?,
            None => Value::String(interpolate(s, vars)?),
        },
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, vars)).collect::<Result<_, _>>()?),
        Value::Object(map) => Value::Object(
            map.iter().map(|(k, v)| Ok((k.clone(), substitute(v, vars)?))).collect::<Result<_, MatchError>>()?,
        ),
        other => other.clone(),
    })
}

/// The error texts protocol 8 itself fixes (SPEC-v8, the reference; SPEC E5, E6, Q11): `unsupported request:
/// <op>` (the op copied verbatim), the prefix `invalid <op> request: ` (the detail after it is the
/// implementation's) and `terminated` (a held `wait` whose process was terminated). Every other message is
/// worded by the implementation, this one's wording being fixed by SPEC.md only.
pub(crate) fn protocol_fixes(message: &str) -> bool {
    if message == "terminated" || message.starts_with("unsupported request: ") {
        return true;
    }
    message
        .strip_prefix("invalid ")
        .and_then(|rest| rest.split_once(" request: "))
        .is_some_and(|(op, _)| !op.is_empty() && !op.contains(char::is_whitespace))
}

/// The frame an `expect` step demands. An error (`{"type": "error", "message": ...}`) whose message the
/// transcript does not mark as fixed by the protocol (`fixed_message`) has its message matched as any text,
/// unless `strict` (the runner's `--strict-messages`) asks for the recorded wording.
pub(crate) fn demanded(frame: &Value, fixed_message: bool, strict: bool) -> Value {
    let mut frame = frame.clone();
    if !strict
        && !fixed_message
        && is_error(&frame)
        && let Some(message) = frame.get_mut("message")
    {
        *message = Value::String(ANY_VALUE.to_owned());
    }
    frame
}

/// Whether an expected frame is an error: an object tagged `error`.
pub(crate) fn is_error(frame: &Value) -> bool {
    frame.get("type").and_then(Value::as_str) == Some("error")
}

/// Whether `actual` fits the glob `pattern`, whose only wildcard is [`ANY_TEXT`].
fn glob(pattern: &str, actual: &str) -> bool {
    let pieces: Vec<&str> = pattern.split(ANY_TEXT).collect();
    if pieces.len() == 1 {
        return pattern == actual;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() || !actual.ends_with(last) {
        return false;
    }
    let mut rest = &actual[first.len()..actual.len() - last.len()];
    for middle in &pieces[1..pieces.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

/// Matches `actual` against `expected`, binding new captures into `vars`. Objects must have exactly the
/// expected members (a member left out must stay left out). The error names the first difference by path.
pub(crate) fn match_value(expected: &Value, actual: &Value, vars: &mut Bindings) -> Result<(), MatchError> {
    match_at("$", expected, actual, vars)
}

fn match_at(path: &str, expected: &Value, actual: &Value, vars: &mut Bindings) -> Result<(), MatchError> {
    match expected {
        Value::String(s) if s == ANY_VALUE => Ok(()),
        Value::String(s) => {
            if let Some(name) = whole_variable(s) {
                return match vars.get(name) {
                    Some(bound) if bound == actual => Ok(()),
                    Some(bound) => Err(MatchError::CaptureDiffers {
                        path: path.to_owned(),
                        name: name.to_owned(),
                        bound: bound.clone(),
                        actual: actual.clone(),
                    }),
                    None => {
                        vars.insert(name.to_owned(), actual.clone());
                        Ok(())
                    }
                };
            }
            let pattern = interpolate(s, vars)
                .map_err(|e| MatchError::InPattern { path: path.to_owned(), error: Box::new(e) })?;
            match actual {
                Value::String(text) if glob(&pattern, text) => Ok(()),
                _ => Err(MatchError::Differs {
                    path: path.to_owned(),
                    expected: Value::String(pattern),
                    actual: actual.clone(),
                }),
            }
        }
        Value::Array(items) => {
            let Value::Array(got) = actual else {
                return Err(MatchError::NotAnArray { path: path.to_owned(), actual: actual.clone() });
            };
            if items.len() != got.len() {
                return Err(MatchError::Length { path: path.to_owned(), expected: items.len(), got: got.len() });
            }
            for (index, (e, a)) in items.iter().zip(got).enumerate() {
                match_at(&format!("{path}[{index}]"), e, a, vars)?;
            }
            Ok(())
        }
        Value::Object(map) => {
            let Value::Object(got) = actual else {
                return Err(MatchError::NotAnObject { path: path.to_owned(), actual: actual.clone() });
            };
            // The tag first, so that a frame of another type is reported as such rather than by a member.
            let tag_first =
                map.iter().filter(|(key, _)| *key == "type").chain(map.iter().filter(|(key, _)| *key != "type"));
            for (key, e) in tag_first {
                match got.get(key) {
                    Some(a) => match_at(&format!("{path}.{key}"), e, a, vars)?,
                    None => return Err(MatchError::Missing { path: path.to_owned(), member: key.clone() }),
                }
            }
            if let Some(extra) = got.keys().find(|key| !map.contains_key(*key)) {
                return Err(MatchError::Unexpected { path: path.to_owned(), member: extra.clone() });
            }
            Ok(())
        }
        other if other == actual => Ok(()),
        other => Err(MatchError::Differs { path: path.to_owned(), expected: other.clone(), actual: actual.clone() }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn wildcards_captures_and_interpolation() {
        let mut vars = Bindings::new();
        let expected = json!({"a": "{...}", "b": "x[..]z", "c": "$id", "d": "n ${id} [..]"});
        match_value(&expected, &json!({"a": [1], "b": "xyyz", "c": 7, "d": "n 7 !"}), &mut vars).unwrap();
        assert_eq!(vars["id"], json!(7));
        let err = match_value(&json!({"c": "$id"}), &json!({"c": 8}), &mut vars).unwrap_err();
        assert!(err.to_string().contains("$.c"), "{err}");
        assert!(match_value(&json!({"a": 1}), &json!({"a": 1, "b": 2}), &mut vars).is_err());
        assert!(match_value(&json!({"a": 1, "b": 2}), &json!({"a": 1}), &mut vars).is_err());
        assert_eq!(substitute(&json!({"id": "$id", "s": "$$x ${id}"}), &vars).unwrap(), json!({"id": 7, "s": "$x 7"}));
        assert!(!glob("a[..]b[..]c", "acb"));
        assert!(glob("a[..]b[..]c", "abc"));
    }

    #[test]
    fn the_protocol_fixes_three_texts() {
        for fixed in [
            "terminated",
            "unsupported request: frobnicate",
            "unsupported request: ",
            "invalid write request: [..]",
            "invalid create_pty request: missing field `cols`",
        ] {
            assert!(protocol_fixes(fixed), "{fixed:?}");
        }
        for ours in [
            "authentication failed",
            "invalid request: [..]",
            "invalid request: duplicate member `op`",
            "cwd must be an absolute path (got tmp)",
            "process ${id1} not found",
            "cannot start /nonexistent/program: [..]",
            "terminated early",
        ] {
            assert!(!protocol_fixes(ours), "{ours:?}");
        }
    }

    /// Runs the expectation `expected` (with its mark) against `actual`, as the runner does.
    fn check(expected: &Value, fixed_message: bool, strict: bool, actual: &Value) -> Result<(), MatchError> {
        let mut vars = Bindings::new();
        vars.insert("id1".into(), json!(7));
        match_value(&demanded(expected, fixed_message, strict), actual, &mut vars)
    }

    #[test]
    fn wording_the_protocol_does_not_fix_differs_only_under_strict_messages() {
        let expected = json!({"type": "error", "message": "cwd must be an absolute path (got tmp)"});
        let reworded = json!({"type": "error", "message": "the working directory tmp is not absolute"});
        check(&expected, false, false, &reworded).expect("any wording passes without --strict-messages");
        let err = check(&expected, false, true, &reworded).expect_err("--strict-messages compares the text");
        assert!(err.to_string().contains("$.message"), "{err}");
        check(&expected, false, true, &json!({"type": "error", "message": "cwd must be an absolute path (got tmp)"}))
            .expect("the recorded text passes under --strict-messages");
        let captured = json!({"type": "error", "message": "process ${id1} not found"});
        check(&captured, false, true, &json!({"type": "error", "message": "process 7 not found"})).expect("strict");
        check(&captured, false, false, &json!({"type": "error", "message": "no process 7"})).expect("lenient");
        // Still an error with a message (that it is a string, the schema checks first): another frame fails
        // either way.
        for strict in [false, true] {
            assert!(check(&expected, false, strict, &json!({"type": "ok"})).is_err());
            assert!(check(&expected, false, strict, &json!({"type": "error"})).is_err());
        }
    }

    #[test]
    fn a_change_in_a_fixed_text_fails_with_or_without_strict_messages() {
        let cases = [
            ("unsupported request: frobnicate", "unknown request: frobnicate"),
            ("unsupported request: frobnicate", "unsupported request: Frobnicate"),
            ("invalid write request: [..]", "invalid request: bad write"),
            ("invalid write request: [..]", "write request invalid: missing field `id`"),
            ("terminated", "process terminated"),
        ];
        for (recorded, changed) in cases {
            let expected = json!({"type": "error", "message": recorded});
            for strict in [false, true] {
                let err = check(&expected, true, strict, &json!({"type": "error", "message": changed}))
                    .expect_err(&format!("{changed:?} against {recorded:?}, strict {strict}"));
                assert!(err.to_string().contains("$.message"), "{err}");
            }
        }
        // The detail after a fixed prefix is the implementation's, in both modes.
        let prefix = json!({"type": "error", "message": "invalid write request: [..]"});
        for strict in [false, true] {
            let other = json!({"type": "error", "message": "invalid write request: `id` is required"});
            check(&prefix, true, strict, &other).expect("another detail");
        }
    }

    #[test]
    fn only_errors_have_their_message_relaxed() {
        let lifecycle = json!({"type": "process", "message": "kept"});
        assert_eq!(demanded(&lifecycle, false, false), lifecycle);
        let error = json!({"type": "error", "message": "x"});
        assert_eq!(demanded(&error, false, false), json!({"type": "error", "message": ANY_VALUE}));
        assert_eq!(demanded(&error, true, false), error);
        assert_eq!(demanded(&error, false, true), error);
        assert_eq!(demanded(&json!(ANY_VALUE), false, false), json!(ANY_VALUE));
    }

    /// Every message reads as the runner has always printed it.
    #[test]
    fn messages_keep_their_wording() {
        let none = Bindings::new();
        assert_eq!(interpolate("a ${x", &none).unwrap_err().to_string(), "unclosed ${ in \"a ${x\"");
        assert_eq!(interpolate("${x}", &none).unwrap_err().to_string(), "${x} is not bound");
        assert_eq!(substitute(&json!("$x"), &none).unwrap_err().to_string(), "$x is not bound");
        let mut vars = Bindings::from([("id".to_owned(), json!(7))]);
        let mut error =
            |expected: Value, actual: Value| match_value(&expected, &actual, &mut vars).unwrap_err().to_string();
        assert_eq!(error(json!({"c": "$id"}), json!({"c": 8})), "$.c: expected $id = 7, got 8");
        assert_eq!(error(json!("x ${y}"), json!("x")), "$: ${y} is not bound");
        assert_eq!(error(json!("a[..]"), json!("b")), "$: expected \"a[..]\", got \"b\"");
        assert_eq!(error(json!([1]), json!(1)), "$: expected an array, got 1");
        assert_eq!(error(json!([1]), json!([1, 2])), "$: expected 1 items, got 2");
        assert_eq!(error(json!({"a": 1}), json!([])), "$: expected an object, got []");
        assert_eq!(error(json!({"a": 1}), json!({})), "$: member `a` is missing");
        assert_eq!(error(json!({}), json!({"b": 1})), "$: unexpected member `b`");
        assert_eq!(error(json!({"a": [true]}), json!({"a": [false]})), "$.a[0]: expected true, got false");
    }
}
