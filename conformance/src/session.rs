//! Carries out the steps of one transcript against one daemon: the runner checks each expectation, the
//! recorder (`record.rs`) fills in the expectations a script leaves open. Every frame received is validated
//! against the bundled schema either way.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::conn::{Conn, Received, encode_hex, show};
use crate::daemon::Daemon;
use crate::failure::{Failure, StepError};
use crate::matching::{Bindings, demanded, interpolate, is_error, match_value, protocol_fixes, substitute};
use crate::record::{Generalizer, MAX_RECORDED_OUTPUT_BYTES};
use crate::schema::Schema;
use crate::transcript::Step;

/// How long an expectation waits for its frame unless the step says otherwise (`within_ms`).
pub(crate) const EXPECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long `expect_eof` waits unless the step says otherwise: well under the daemon's 10 s first-request deadline
/// (SPEC N1), so a daemon that never refuses a bad frame, and is only closed by that deadline, fails.
pub(crate) const EOF_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a `run` helper may take.
pub(crate) const HELPER_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest `sleep` or `expect_none` a transcript may ask for, so no transcript can hang the suite.
pub(crate) const MAX_PAUSE: Duration = Duration::from_secs(60);
/// The pause between the pieces of a `send` with `chunk`.
const CHUNK_PAUSE: Duration = Duration::from_millis(5);
/// How often a `run` helper is checked for its exit.
const HELPER_POLL: Duration = Duration::from_millis(5);

/// The state of one transcript's run.
#[derive(Debug)]
pub(crate) struct Session<'a> {
    daemon: &'a Daemon,
    schema: &'a Schema,
    conns: BTreeMap<String, Conn>,
    pub vars: Bindings,
    helpers: Vec<Child>,
    _scratch: tempfile::TempDir,
    /// Set when recording: how received values are turned into patterns.
    pub generalizer: Option<Generalizer>,
    /// `--strict-messages`: error messages the protocol does not fix are compared as recorded too.
    pub strict_messages: bool,
}

impl<'a> Session<'a> {
    pub(crate) fn new(daemon: &'a Daemon, schema: &'a Schema) -> Result<Session<'a>, StepError> {
        let scratch =
            tempfile::Builder::new().prefix("opencode-pty-conformance-tmp.").tempdir().map_err(StepError::Scratch)?;
        let tmp = scratch.path().to_str().ok_or(StepError::ScratchNotUtf8)?.to_owned();
        let registration = &daemon.registration;
        let mut vars = Bindings::new();
        vars.insert("token".into(), json!(registration.token));
        vars.insert("instance_id".into(), json!(registration.instance_id));
        vars.insert("daemon_pid".into(), json!(registration.pid));
        vars.insert("features".into(), json!(registration.features));
        vars.insert("tmp".into(), json!(tmp));
        if let Some(binary) = daemon.binary.as_deref().and_then(std::path::Path::to_str) {
            vars.insert("daemon_binary".into(), json!(binary));
        }
        Ok(Session {
            daemon,
            schema,
            conns: BTreeMap::new(),
            vars,
            helpers: Vec::new(),
            _scratch: scratch,
            generalizer: None,
            strict_messages: false,
        })
    }

    fn conn(&mut self, name: &str) -> Result<&mut Conn, StepError> {
        self.conns.get_mut(name).ok_or_else(|| StepError::NotOpen(name.to_owned()))
    }

    /// Carries out one step; returns the step as it should be recorded (the same step when checking).
    pub(crate) fn step(&mut self, step: &Step) -> Result<Step, Failure> {
        match step {
            Step::Connect { conn } => {
                let opened = Conn::connect(&self.daemon.registration.socket)?;
                self.conns.insert(conn.clone(), opened);
            }
            Step::Close { conn } => {
                self.conns.remove(conn).ok_or_else(|| StepError::NotOpen(conn.clone()))?;
            }
            Step::Send { conn, frame, text, hex, chunk } => {
                let bytes = match (frame, text, hex) {
                    (Some(frame), None, None) => control_frame(substitute(frame, &self.vars)?.to_string().as_bytes())?,
                    (None, Some(text), None) => control_frame(interpolate(text, &self.vars)?.as_bytes())?,
                    (None, None, Some(hex)) => decode_hex(hex)?,
                    _ => {
                        return Err(StepError::Malformed("a send step needs exactly one of frame, text and hex").into());
                    }
                };
                let size = chunk.and_then(|n| usize::try_from(n).ok()).filter(|n| *n > 0).unwrap_or(bytes.len().max(1));
                let c = self.conn(conn)?;
                for (index, piece) in bytes.chunks(size).enumerate() {
                    if index > 0 {
                        std::thread::sleep(CHUNK_PAUSE);
                    }
                    c.send_raw(piece)?;
                }
            }
            Step::Expect { conn, fixed_message, frame, within_ms } => {
                let deadline = Instant::now() + within_ms.map_or(EXPECT_TIMEOUT, Duration::from_millis);
                let actual = self.expect_control(conn, deadline)?;
                let (expected, fixed_message) = match frame {
                    Some(expected) => (expected.clone(), *fixed_message),
                    None => match self.generalizer.as_mut() {
                        Some(generalizer) => {
                            let expected = generalizer.generalize(&actual);
                            let fixed = is_error(&expected)
                                && expected.get("message").and_then(Value::as_str).is_some_and(protocol_fixes);
                            (expected, fixed)
                        }
                        None => return Err(StepError::Malformed("an expect step needs a frame").into()),
                    },
                };
                let demanded = demanded(&expected, fixed_message, self.strict_messages);
                if let Err(error) = match_value(&demanded, &actual, &mut self.vars) {
                    let shown = resolve(&demanded, &self.vars);
                    return Err(Failure { error: Box::new(error.into()), diff: Some(diff(&shown, &actual)) });
                }
                let frame = Some(expected);
                return Ok(Step::Expect { conn: conn.clone(), fixed_message, frame, within_ms: *within_ms });
            }
            Step::ExpectOutput { conn, start, text, hex, bytes } => {
                return self.expect_output(conn, start.as_ref(), text.as_deref(), hex.as_deref(), *bytes);
            }
            Step::CloseWrite { conn } => {
                self.conn(conn)?.close_write()?;
            }
            Step::ExpectEof { conn, within_ms } => {
                let within = within_ms.map_or(EOF_TIMEOUT, Duration::from_millis).min(MAX_PAUSE);
                let c = self.conn(conn)?;
                if let Some((start, bytes)) = c.pending_output.clone() {
                    return Err(StepError::NotTheEnd(Received::Output { start, bytes }).into());
                }
                match self.receive(conn, Instant::now() + within)? {
                    Some(Received::Eof) => {}
                    Some(other) => return Err(StepError::NotTheEnd(other).into()),
                    None => return Err(StepError::NoEnd(within).into()),
                }
            }
            Step::ExpectNone { conn, ms } => {
                let pause = Duration::from_millis(*ms).min(MAX_PAUSE);
                if let Some((start, bytes)) = self.conn(conn)?.pending_output.clone() {
                    return Err(StepError::Pending(Received::Output { start, bytes }).into());
                }
                if let Some(got) = self.receive(conn, Instant::now() + pause)? {
                    return Err(StepError::Something { pause, got }.into());
                }
            }
            Step::Run { program, args } => self.run(program, args)?,
            Step::Spawn { program, args } => {
                let child = self.command(program, args)?.stderr(Stdio::null()).spawn();
                let child = child.map_err(|cause| StepError::HelperStart { program: program.clone(), cause })?;
                self.helpers.push(child);
            }
            Step::Sleep { ms } => std::thread::sleep(Duration::from_millis(*ms).min(MAX_PAUSE)),
        }
        Ok(step.clone())
    }

    /// Receives one frame, validating it against the schema and keeping output offsets contiguous.
    fn receive(&mut self, conn: &str, deadline: Instant) -> Result<Option<Received>, StepError> {
        let schema = self.schema;
        let c = self.conn(conn)?;
        let got = c.receive(deadline)?;
        match &got {
            Some(Received::Control(value)) => {
                schema.check_response(value)?;
                if value.get("type").and_then(Value::as_str) == Some("attached") {
                    c.output_end = value.get("end_offset").and_then(Value::as_u64);
                }
            }
            Some(Received::Output { start, bytes }) => {
                schema.check_output(*start, bytes)?;
                if let Some(end) = c.output_end
                    && end != *start
                {
                    return Err(StepError::Gap { start: *start, end });
                }
                c.output_end = Some(start + bytes.len() as u64);
            }
            _ => {}
        }
        Ok(got)
    }

    fn expect_control(&mut self, conn: &str, deadline: Instant) -> Result<Value, Failure> {
        if let Some((start, bytes)) = self.conn(conn)?.pending_output.clone() {
            return Err(StepError::NotControl(Received::Output { start, bytes }).into());
        }
        match self.receive(conn, deadline)? {
            Some(Received::Control(value)) => Ok(value),
            Some(other) => Err(StepError::NotControl(other).into()),
            None => Err(StepError::NoControl.into()),
        }
    }

    fn expect_output(
        &mut self,
        conn: &str,
        start: Option<&Value>,
        text: Option<&str>,
        hex: Option<&str>,
        bytes: Option<u64>,
    ) -> Result<Step, Failure> {
        let wanted: Option<Vec<u8>> = match (text, hex) {
            (Some(text), None) => Some(text.as_bytes().to_vec()),
            (None, Some(hex)) => Some(decode_hex(hex)?),
            (None, None) => None,
            _ => return Err(StepError::Malformed("an expect_output step takes text or hex, not both").into()),
        };
        let count = match (&wanted, bytes) {
            (Some(w), _) => w.len(),
            (None, Some(n)) => usize::try_from(n).map_err(|_| StepError::Malformed("byte count too large"))?,
            (None, None) => return Err(StepError::Malformed("an expect_output step needs text, hex or bytes").into()),
        };
        let deadline = Instant::now() + EXPECT_TIMEOUT;
        let mut got: Vec<u8> = Vec::with_capacity(count);
        let mut first: Option<u64> = None;
        while got.len() < count {
            let (at, chunk) = match self.conn(conn)?.pending_output.take() {
                Some(pending) => pending,
                None => match self.receive(conn, deadline)? {
                    Some(Received::Output { start, bytes }) => (start, bytes),
                    Some(other) => {
                        return Err(StepError::OutputInterrupted { count, got: other, so_far: got }.into());
                    }
                    None => {
                        return Err(StepError::OutputShort { count, within: EXPECT_TIMEOUT, so_far: got }.into());
                    }
                },
            };
            first.get_or_insert(at);
            let take = chunk.len().min(count - got.len());
            got.extend_from_slice(&chunk[..take]);
            if take < chunk.len() {
                self.conn(conn)?.pending_output = Some((at + take as u64, chunk[take..].to_vec()));
            }
        }
        let first = first.unwrap_or_else(|| self.conns.get(conn).and_then(|c| c.output_end).unwrap_or(0));
        let start_value = match start {
            Some(expected) => {
                let expected = substitute(expected, &self.vars)?;
                if expected != json!(first) {
                    return Err(StepError::OutputStart { expected, first }.into());
                }
                start.cloned()
            }
            None if self.generalizer.is_some() => Some(json!(first)),
            None => None,
        };
        if let Some(wanted) = &wanted
            && *wanted != got
        {
            return Err(Failure {
                error: Box::new(StepError::OutputDiffers(first)),
                diff: Some(
                    similar_asserts::SimpleDiff::from_str(&show(wanted), &show(&got), "expected", "received")
                        .to_string(),
                ),
            });
        }
        let mut recorded =
            Step::ExpectOutput { conn: conn.to_owned(), start: start_value, text: None, hex: None, bytes: None };
        if let Step::ExpectOutput { text, hex, bytes, .. } = &mut recorded {
            match (&wanted, self.generalizer.is_some()) {
                (None, true) if got.len() <= MAX_RECORDED_OUTPUT_BYTES => match String::from_utf8(got.clone()) {
                    Ok(s) => *text = Some(s),
                    Err(_) => *hex = Some(encode_hex(&got)),
                },
                (None, _) => *bytes = Some(got.len() as u64),
                (Some(w), _) => match std::str::from_utf8(w) {
                    Ok(s) => *text = Some(s.to_owned()),
                    Err(_) => *hex = Some(encode_hex(w)),
                },
            }
        }
        Ok(recorded)
    }

    fn command(&self, program: &str, args: &[String]) -> Result<Command, StepError> {
        let mut command = Command::new(interpolate(program, &self.vars)?);
        for arg in args {
            command.arg(interpolate(arg, &self.vars)?);
        }
        command.stdin(Stdio::null()).stdout(Stdio::null());
        Ok(command)
    }

    fn run(&mut self, program: &str, args: &[String]) -> Result<(), StepError> {
        let mut child = self
            .command(program, args)?
            .stderr(Stdio::null())
            .spawn()
            .map_err(|cause| StepError::HelperStart { program: program.to_owned(), cause })?;
        let deadline = Instant::now() + HELPER_TIMEOUT;
        loop {
            match child.try_wait().map_err(StepError::HelperWait)? {
                Some(status) if status.success() => return Ok(()),
                Some(status) => {
                    return Err(StepError::HelperFailed { program: program.to_owned(), args: args.to_vec(), status });
                }
                None if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(StepError::HelperLate { program: program.to_owned(), within: HELPER_TIMEOUT });
                }
                None => std::thread::sleep(HELPER_POLL),
            }
        }
    }
}

impl Drop for Session<'_> {
    /// Kills the helpers the transcript started and closes its connections.
    fn drop(&mut self) {
        for helper in &mut self.helpers {
            let _ = helper.kill();
            let _ = helper.wait();
        }
    }
}

/// `expected` with the variables bound so far shown as their values, for the diff; patterns stay as written.
fn resolve(expected: &Value, vars: &Bindings) -> Value {
    match expected {
        Value::String(s) => substitute(expected, vars).unwrap_or_else(|_| Value::String(s.clone())),
        Value::Array(items) => Value::Array(items.iter().map(|v| resolve(v, vars)).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), resolve(v, vars))).collect()),
        other => other.clone(),
    }
}

/// A readable, diffable form of a JSON value.
pub(crate) fn diff(expected: &Value, actual: &Value) -> String {
    let left = serde_json::to_string_pretty(expected).unwrap_or_default();
    let right = serde_json::to_string_pretty(actual).unwrap_or_default();
    similar_asserts::SimpleDiff::from_str(&left, &right, "expected", "received").to_string()
}

/// A frame (header and payload) holding `payload` as it is: not checked, so a transcript can send text that
/// is not a JSON object.
fn control_frame(payload: &[u8]) -> Result<Vec<u8>, StepError> {
    let len = u32::try_from(payload.len()).map_err(|_| StepError::PayloadTooLarge)?;
    let mut frame = len.to_be_bytes().to_vec();
    frame.extend_from_slice(payload);
    Ok(frame)
}

pub(crate) fn decode_hex(hex: &str) -> Result<Vec<u8>, StepError> {
    let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return Err(StepError::OddHex(hex.to_owned()));
    }
    digits
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
                .ok_or_else(|| StepError::NotHex(hex.to_owned()))
        })
        .collect()
}
