//! The transcript format (version [`FORMAT_VERSION`]): a header line and one step per line, read from and
//! written to JSON Lines. `README.md` beside this crate documents it for readers of other implementations.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of the transcript format this runner reads and the recorder writes.
pub(crate) const FORMAT_VERSION: u64 = 1;

/// The longest a transcript file may be, so a stray file cannot make the runner read without end.
pub(crate) const MAX_TRANSCRIPT_BYTES: u64 = 4 * 1024 * 1024;

/// The first line of a transcript.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Header {
    /// Always [`FORMAT_VERSION`].
    pub conformance: u64,
    /// What the transcript shows, in one sentence.
    pub description: String,
    /// The rules of `SPEC.md` it observes.
    pub spec: Vec<String>,
    /// Whether it may run on a daemon shared with other shareable transcripts, in parallel with them.
    #[serde(default)]
    pub shareable: bool,
    /// Who claims the daemon: `runner` (before the first step, on a channel the steps never see) or
    /// `transcript` (its own steps send `own` within the ownership deadline).
    #[serde(default = "runner_owner")]
    pub owner: Owner,
    /// The features (SPEC V2) the daemon must announce in its registration for the transcript to run; against a
    /// daemon without one of them it is skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
}

fn runner_owner() -> Owner {
    Owner::Runner
}

/// Who claims a fresh daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Owner {
    Runner,
    Transcript,
}

/// One step. Expectation steps in a recorder script may leave their content out; the recorder fills it in.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Step {
    /// Open the named connection to the daemon's socket.
    Connect { conn: String },
    /// Close the named connection (both directions).
    Close { conn: String },
    /// Send one frame: a JSON value (`frame`), a control payload given as text (`text`, for what a JSON value
    /// cannot hold, such as a duplicate member), or raw bytes, header included (`hex`, for broken framing).
    Send {
        conn: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        frame: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hex: Option<String>,
        /// Write the bytes this many at a time, with a short pause between writes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chunk: Option<u64>,
    },
    /// Receive one control frame that matches `frame` (patterns and captures allowed). For an error frame,
    /// `fixed_message` says the protocol fixes its message (as the pattern reads); any other message is the
    /// implementation's wording, compared only under `--strict-messages`.
    Expect {
        conn: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        fixed_message: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        frame: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        within_ms: Option<u64>,
    },
    /// Receive output frames, contiguous from `start`, that carry exactly `text` (UTF-8) or `hex`, or just
    /// `bytes` bytes of any content.
    ExpectOutput {
        conn: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        start: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hex: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
    },
    /// The daemon closes the connection with no further frame (within `within_ms`, default 3 s: `EOF_TIMEOUT`).
    ExpectEof {
        conn: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        within_ms: Option<u64>,
    },
    /// Shut down the sending half of the named connection: the daemon reads the end of the stream.
    CloseWrite { conn: String },
    /// No frame and no end of stream arrives for `ms` milliseconds.
    ExpectNone { conn: String, ms: u64 },
    /// Run a helper program to completion; it must exit 0.
    Run { program: String, args: Vec<String> },
    /// Start a helper program in the background; it is killed when the transcript ends.
    Spawn { program: String, args: Vec<String> },
    /// Pause for `ms` milliseconds.
    Sleep { ms: u64 },
}

/// A transcript read from a file.
#[derive(Debug, Clone)]
pub(crate) struct Transcript {
    /// `<area>/<name>`, the file's path under the transcript directory without `.jsonl`.
    pub id: String,
    pub path: PathBuf,
    pub header: Header,
    /// Each step with its line number (1-based) in the file.
    pub steps: Vec<(usize, Step)>,
}

impl Transcript {
    /// Reads and checks one transcript file.
    pub(crate) fn load(path: &Path, id: String) -> anyhow::Result<Transcript> {
        let size = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?.len();
        if size > MAX_TRANSCRIPT_BYTES {
            bail!("{} is {size} bytes, over the {MAX_TRANSCRIPT_BYTES}-byte limit", path.display());
        }
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut lines = text.lines().enumerate().filter(|(_, line)| !line.trim().is_empty());
        let Some((_, first)) = lines.next() else { bail!("{} is empty", path.display()) };
        let header: Header =
            serde_json::from_str(first).with_context(|| format!("{}:1: not a transcript header", path.display()))?;
        if header.conformance != FORMAT_VERSION {
            bail!("{}: format version {} (this runner reads {FORMAT_VERSION})", path.display(), header.conformance);
        }
        let mut steps = Vec::new();
        for (index, line) in lines {
            let step: Step =
                serde_json::from_str(line).with_context(|| format!("{}:{}: not a step", path.display(), index + 1))?;
            steps.push((index + 1, step));
        }
        let checks = |step: &Step| {
            matches!(
                step,
                Step::Expect { .. } | Step::ExpectOutput { .. } | Step::ExpectEof { .. } | Step::ExpectNone { .. }
            )
        };
        if !steps.iter().any(|(_, step)| checks(step)) {
            bail!("{}: no expect step, so it could never fail", path.display());
        }
        for (line, step) in &steps {
            if let Step::Expect { fixed_message: true, frame, .. } = step
                && !frame.as_ref().is_some_and(crate::matching::is_error)
            {
                bail!("{}:{line}: fixed_message marks the message of an error frame, and this is none", path.display());
            }
        }
        Ok(Transcript { id, path: path.to_owned(), header, steps })
    }

    /// Writes the transcript as JSON Lines: one compact line per step, fields in a fixed order.
    pub(crate) fn to_jsonl(header: &Header, steps: &[Step]) -> String {
        let mut out = serde_json::to_string(header).expect("a header serializes");
        out.push('\n');
        for step in steps {
            out.push_str(&serde_json::to_string(step).expect("a step serializes"));
            out.push('\n');
        }
        out
    }
}

/// Every `.jsonl` file under `dir` (one level of area folders), as `(id, path)`, sorted by id.
pub(crate) fn discover(dir: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    let areas = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for area in areas {
        let area = area?.path();
        if !area.is_dir() {
            continue;
        }
        let area_name = area.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        for file in std::fs::read_dir(&area)? {
            let file = file?.path();
            if file.extension().is_some_and(|e| e == "jsonl") {
                let stem = file.file_stem().and_then(|n| n.to_str()).unwrap_or_default();
                found.push((format!("{area_name}/{stem}"), file));
            }
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matching::{is_error, protocol_fixes};

    /// Every expected error of every transcript is marked `fixed_message` exactly when the protocol fixes its
    /// text, and each file reads back as the recorder writes it (so the marks are where it puts them).
    #[test]
    fn the_transcripts_mark_exactly_the_messages_the_protocol_fixes() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("transcripts");
        let (mut fixed, mut free) = (0, 0);
        for (id, path) in discover(&dir).expect("the transcripts") {
            let transcript = Transcript::load(&path, id.clone()).expect("loads");
            for (line, step) in &transcript.steps {
                let Step::Expect { fixed_message, frame: Some(frame), .. } = step else { continue };
                if !is_error(frame) {
                    continue;
                }
                let message = frame["message"].as_str().expect("an error's message is a string");
                assert_eq!(*fixed_message, protocol_fixes(message), "{id}:{line}: {message:?}");
                if *fixed_message {
                    fixed += 1;
                } else {
                    free += 1;
                }
            }
            let steps: Vec<Step> = transcript.steps.into_iter().map(|(_, step)| step).collect();
            let text = std::fs::read_to_string(&path).expect("read");
            assert_eq!(Transcript::to_jsonl(&transcript.header, &steps), text, "{id} is not as the recorder writes it");
        }
        assert!(fixed >= 20 && free >= 40, "{fixed} fixed and {free} other messages");
    }

    #[test]
    fn a_fixed_message_mark_on_a_frame_that_is_not_an_error_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.jsonl");
        let header = r#"{"conformance":1,"description":"d","spec":[]}"#;
        let step = r#"{"step":"expect","conn":"a","fixed_message":true,"frame":{"type":"ok"}}"#;
        std::fs::write(&path, format!("{header}\n{step}\n")).expect("write");
        let error = Transcript::load(&path, "a/t".into()).expect_err("refused").to_string();
        assert!(error.contains("t.jsonl:2: fixed_message"), "{error}");
        let error_step =
            r#"{"step":"expect","conn":"a","fixed_message":true,"frame":{"type":"error","message":"terminated"}}"#;
        std::fs::write(&path, format!("{header}\n{error_step}\n")).expect("write");
        Transcript::load(&path, "a/t".into()).expect("an error frame may be marked");
    }
}
