//! The recorder: runs a script (a transcript whose expectations may leave their content out) against a
//! daemon and writes the transcript, with what differs from run to run replaced by patterns: the token,
//! instance id and daemon pid by variables, process ids and tickets by captures, child pids, times and
//! checkpoints by `"{...}"`, and the scratch directory by `${tmp}`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::matching::ANY_VALUE;

/// Output up to this many bytes is recorded byte for byte; more is recorded as a byte count only.
pub(crate) const MAX_RECORDED_OUTPUT_BYTES: usize = 4096;

/// Members whose value differs on every run and is recorded as `"{...}"` (when not null).
const VOLATILE_MEMBERS: &[&str] =
    &["started_at", "exited_at", "finished_at", "expires_at", "checkpoint_base64", "foreground_process"];

/// Turns received values into patterns; keeps the captures it named so that a value seen again gets the
/// same name.
#[derive(Debug)]
pub(crate) struct Generalizer {
    token: String,
    instance_id: String,
    daemon_pid: u64,
    /// The registration's `features`: `pong` carries the same list, recorded as `$features`.
    features: Vec<String>,
    tmp: String,
    /// Process ids seen so far, by value: `$id1`, `$id2`, ... in order of first appearance.
    ids: BTreeMap<u64, String>,
    /// Handoff tickets seen so far: `$ticket1`, ...
    tickets: BTreeMap<String, String>,
}

impl Generalizer {
    pub(crate) fn new(token: &str, instance_id: &str, daemon_pid: u64, features: &[String], tmp: &str) -> Generalizer {
        Generalizer {
            token: token.to_owned(),
            instance_id: instance_id.to_owned(),
            daemon_pid,
            features: features.to_vec(),
            tmp: tmp.to_owned(),
            ids: BTreeMap::new(),
            tickets: BTreeMap::new(),
        }
    }

    /// The pattern to record for a received control frame.
    pub(crate) fn generalize(&mut self, value: &Value) -> Value {
        let tag = value.get("type").and_then(Value::as_str);
        let mut out = self.walk(None, value);
        if tag == Some("foreground_process_changed")
            && let Some(process) = out.get_mut("process").filter(|p| !p.is_null())
        {
            *process = json!(ANY_VALUE);
        }
        // A daemon's features are its own (V2, V3): `pong` must say what the registration says, whatever it is.
        if tag == Some("pong")
            && let Some(features) = out.get_mut("features").filter(|f| **f == json!(self.features))
        {
            *features = json!("$features");
        }
        out
    }

    fn id_name(&mut self, id: u64) -> String {
        let next = self.ids.len() + 1;
        self.ids.entry(id).or_insert_with(|| format!("id{next}")).clone()
    }

    fn walk(&mut self, key: Option<&str>, value: &Value) -> Value {
        match (key, value) {
            (Some(k), v) if VOLATILE_MEMBERS.contains(&k) && !v.is_null() => json!(ANY_VALUE),
            // Null or a name, depending on whether the daemon had looked at the new child yet.
            (Some("foreground_process"), _) => json!(ANY_VALUE),
            (Some("pid"), Value::Number(n)) if n.as_u64() == Some(self.daemon_pid) => json!("$daemon_pid"),
            (Some("pid"), Value::Number(_)) => json!(ANY_VALUE),
            // A process id, or the one a page of `list` says to go on after (SPEC D17).
            (Some("id" | "next"), Value::Number(n)) if n.as_u64().is_some() => {
                let name = self.id_name(n.as_u64().unwrap_or_default());
                json!(format!("${name}"))
            }
            (Some("ticket"), Value::String(t)) => {
                let next = self.tickets.len() + 1;
                let name = self.tickets.entry(t.clone()).or_insert_with(|| format!("ticket{next}")).clone();
                json!(format!("${name}"))
            }
            (_, Value::String(s)) if *s == self.token => json!("$token"),
            (_, Value::String(s)) if *s == self.instance_id => json!("$instance_id"),
            (key, Value::String(s)) => json!(self.text(key, s)),
            (_, Value::Array(items)) => Value::Array(items.iter().map(|v| self.walk(None, v)).collect()),
            (_, Value::Object(map)) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), self.walk(Some(k), v))).collect::<Map<_, _>>())
            }
            (_, other) => other.clone(),
        }
    }

    /// A string with the scratch directory replaced by `${tmp}`, a literal `$` escaped, and in a message the
    /// ids of known processes (`process 3`) replaced by their captures.
    fn text(&self, key: Option<&str>, s: &str) -> String {
        let mut out = s.replace('$', "$$").replace(&self.tmp, "${tmp}");
        if key == Some("message") {
            // The spec fixes only the prefix of a decoding error (E4, E6): the detail is the implementation's.
            if let Some(at) = out.find(" request: ")
                && out.starts_with("invalid ")
                && !out.contains("duplicate member")
            {
                out = format!("{}{}", &out[..at + " request: ".len()], crate::matching::ANY_TEXT);
            }
            // `cannot start P: <reason>` (D1, Q3): the reason is the system's text, worded by each platform.
            if out.starts_with("cannot start ")
                && let Some(at) = out.find(": ")
            {
                out = format!("{}{}", &out[..at + 2], crate::matching::ANY_TEXT);
            }
            for (id, name) in &self.ids {
                for (before, after) in
                    [("process ", " "), ("process ", ";"), ("process ", ":"), ("process ", ""), ("process ", ")")]
                {
                    let literal = format!("{before}{id}{after}");
                    if after.is_empty() {
                        if out.ends_with(&literal) {
                            let cut = out.len() - literal.len();
                            out = format!("{}{before}${{{name}}}", &out[..cut]);
                        }
                    } else {
                        out = out.replace(&literal, &format!("{before}${{{name}}}{after}"));
                    }
                }
            }
        }
        out
    }
}

/// Records each script under `scripts` matching `filter` against a fresh daemon from `binary`, and writes
/// the transcript to the same relative path under `out`.
pub(crate) fn record_all(
    binary: &crate::daemon::Binary,
    scripts: &std::path::Path,
    out: &std::path::Path,
    filter: Option<&str>,
    start_timeout: std::time::Duration,
) -> anyhow::Result<()> {
    use anyhow::Context;

    let schema = crate::schema::Schema::load()?;
    let loaded = crate::runner::load(scripts, filter)?;
    anyhow::ensure!(!loaded.is_empty(), "no script under {} matches", scripts.display());
    for script in loaded {
        let claim = script.header.owner == crate::transcript::Owner::Runner;
        let daemon = crate::daemon::Daemon::start(binary, start_timeout, claim)?;
        let mut session = crate::session::Session::new(&daemon, &schema)?;
        let tmp = session.vars["tmp"].as_str().unwrap_or_default().to_owned();
        let registration = &daemon.registration;
        session.generalizer = Some(Generalizer::new(
            &registration.token,
            &registration.instance_id,
            u64::from(registration.pid),
            &registration.features,
            &tmp,
        ));
        session.strict_messages = true;
        let mut steps = Vec::new();
        for (line, step) in &script.steps {
            match session.step(step) {
                Ok(recorded) => steps.push(recorded),
                Err(failure) => anyhow::bail!(
                    "{}:{line}: {}: {}{}",
                    script.path.display(),
                    crate::runner::summary(step),
                    failure.error,
                    failure.diff.map(|d| format!("\n{d}")).unwrap_or_default()
                ),
            }
        }
        let target = out.join(format!("{}.jsonl", script.id));
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        let text = crate::transcript::Transcript::to_jsonl(&script.header, &steps);
        std::fs::write(&target, text).with_context(|| format!("writing {}", target.display()))?;
        println!("recorded {}", target.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_changes_between_runs_becomes_a_pattern() {
        let mut g = Generalizer::new("tok", "inst", 77, &["input".to_owned()], "/tmp/x");
        let pong = json!({"type": "pong", "instance_id": "inst", "pid": 77, "protocol": 8, "features": ["input"]});
        assert_eq!(
            g.generalize(&pong),
            json!({"type": "pong", "instance_id": "$instance_id", "pid": "$daemon_pid", "protocol": 8,
                   "features": "$features"})
        );
        let other = json!({"type": "pong", "instance_id": "inst", "pid": 77, "protocol": 8, "features": []});
        assert_eq!(g.generalize(&other)["features"], json!([]), "not the registration's: kept as it was");
        let created = json!({"type": "created", "process": {"id": 5, "pid": 1234, "started_at": 1, "exited_at": null,
                              "pipe": {"output_path": "/tmp/x/out", "metadata": {"cost": "$5"}}}});
        assert_eq!(
            g.generalize(&created),
            json!({"type": "created", "process": {"id": "$id1", "pid": "{...}", "started_at": "{...}",
                   "exited_at": null, "pipe": {"output_path": "${tmp}/out", "metadata": {"cost": "$$5"}}}})
        );
        let error = json!({"type": "error", "message": "process 5 not found"});
        assert_eq!(g.generalize(&error)["message"], "process ${id1} not found");
        let shell = json!({"type": "error", "message": "process 5: no command 15 (the next command is 5)"});
        assert_eq!(g.generalize(&shell)["message"], "process ${id1}: no command 15 (the next command is 5)");
        let decode = json!({"type": "error", "message": "invalid write request: missing field `id`"});
        assert_eq!(g.generalize(&decode)["message"], "invalid write request: [..]");
        let duplicate = json!({"type": "error", "message": "invalid request: duplicate member `op`"});
        assert_eq!(g.generalize(&duplicate)["message"], "invalid request: duplicate member `op`");
        let handoff = json!({"type": "handoff", "ticket": "abc", "expires_at": 9});
        assert_eq!(g.generalize(&handoff), json!({"type": "handoff", "ticket": "$ticket1", "expires_at": "{...}"}));
    }
}
