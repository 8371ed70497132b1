//! Patterns in expected frames and variables in sent ones: `"{...}"` matches any value, `"[..]"` inside a
//! string matches any run of characters, `"$name"` binds a value the first time and must match it later,
//! and `${name}` inside a string stands for a bound value.

use std::collections::BTreeMap;

use serde_json::Value;

/// The value pattern that matches anything.
pub const ANY_VALUE: &str = "{...}";
/// The string pattern that matches any run of characters.
pub const ANY_TEXT: &str = "[..]";

/// Named values: the runner's own (`token`, `instance_id`, `daemon_pid`, `tmp`) and captures.
pub type Bindings = BTreeMap<String, Value>;

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
pub fn interpolate(s: &str, vars: &Bindings) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(inner) = after.strip_prefix('{') {
            let Some(close) = inner.find('}') else { return Err(format!("unclosed ${{ in {s:?}")) };
            let name = &inner[..close];
            let value = vars.get(name).ok_or_else(|| format!("${{{name}}} is not bound"))?;
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
pub fn substitute(value: &Value, vars: &Bindings) -> Result<Value, String> {
    Ok(match value {
        Value::String(s) => match whole_variable(s) {
            Some(name) => vars.get(name).cloned().ok_or_else(|| format!("${name} is not bound"))?,
            None => Value::String(interpolate(s, vars)?),
        },
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, vars)).collect::<Result<_, _>>()?),
        Value::Object(map) => Value::Object(
            map.iter().map(|(k, v)| Ok((k.clone(), substitute(v, vars)?))).collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
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
pub fn match_value(expected: &Value, actual: &Value, vars: &mut Bindings) -> Result<(), String> {
    match_at("$", expected, actual, vars)
}

fn match_at(path: &str, expected: &Value, actual: &Value, vars: &mut Bindings) -> Result<(), String> {
    match expected {
        Value::String(s) if s == ANY_VALUE => Ok(()),
        Value::String(s) => {
            if let Some(name) = whole_variable(s) {
                return match vars.get(name) {
                    Some(bound) if bound == actual => Ok(()),
                    Some(bound) => Err(format!("{path}: expected ${name} = {bound}, got {actual}")),
                    None => {
                        vars.insert(name.to_owned(), actual.clone());
                        Ok(())
                    }
                };
            }
            let pattern = interpolate(s, vars).map_err(|e| format!("{path}: {e}"))?;
            match actual {
                Value::String(text) if glob(&pattern, text) => Ok(()),
                _ => Err(format!("{path}: expected {}, got {actual}", Value::String(pattern))),
            }
        }
        Value::Array(items) => {
            let Value::Array(got) = actual else { return Err(format!("{path}: expected an array, got {actual}")) };
            if items.len() != got.len() {
                return Err(format!("{path}: expected {} items, got {}", items.len(), got.len()));
            }
            for (index, (e, a)) in items.iter().zip(got).enumerate() {
                match_at(&format!("{path}[{index}]"), e, a, vars)?;
            }
            Ok(())
        }
        Value::Object(map) => {
            let Value::Object(got) = actual else { return Err(format!("{path}: expected an object, got {actual}")) };
            // The tag first, so that a frame of another type is reported as such rather than by a member.
            let tag_first =
                map.iter().filter(|(key, _)| *key == "type").chain(map.iter().filter(|(key, _)| *key != "type"));
            for (key, e) in tag_first {
                match got.get(key) {
                    Some(a) => match_at(&format!("{path}.{key}"), e, a, vars)?,
                    None => return Err(format!("{path}: member `{key}` is missing")),
                }
            }
            if let Some(extra) = got.keys().find(|key| !map.contains_key(*key)) {
                return Err(format!("{path}: unexpected member `{extra}`"));
            }
            Ok(())
        }
        other if other == actual => Ok(()),
        other => Err(format!("{path}: expected {other}, got {actual}")),
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
        assert!(err.contains("$.c"), "{err}");
        assert!(match_value(&json!({"a": 1}), &json!({"a": 1, "b": 2}), &mut vars).is_err());
        assert!(match_value(&json!({"a": 1, "b": 2}), &json!({"a": 1}), &mut vars).is_err());
        assert_eq!(substitute(&json!({"id": "$id", "s": "$$x ${id}"}), &vars).unwrap(), json!({"id": 7, "s": "$x 7"}));
        assert!(!glob("a[..]b[..]c", "acb"));
        assert!(glob("a[..]b[..]c", "abc"));
    }
}
