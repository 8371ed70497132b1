//! Why a transcript failed: [`StepError`], what went wrong in setting it up or in one of its steps (the
//! errors of connections, the daemon, matching and the schema among them), and [`Failure`], that error with
//! a diff of expected and received when a frame or output differs. Each message is one line of the report.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::conn::{ConnError, Received, show};
use crate::daemon::DaemonError;
use crate::matching::MatchError;
use crate::schema::SchemaError;

/// Why a transcript could not be set up, or one of its steps failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StepError {
    #[error("cannot start the daemon: {0}")]
    DaemonStart(DaemonError),
    /// The daemon the shareable transcripts share could not be had (the same error for each of them).
    #[error("the shared daemon is not usable: {0}")]
    SharedDaemon(Arc<DaemonError>),
    #[error("no shared daemon")]
    NoSharedDaemon,
    #[error("cannot make a scratch directory: {0}")]
    Scratch(std::io::Error),
    #[error("the scratch directory's path is not UTF-8")]
    ScratchNotUtf8,
    #[error("connection `{0}` is not open")]
    NotOpen(String),
    /// The step itself is malformed (what is wrong with it).
    #[error("{0}")]
    Malformed(&'static str),
    #[error(transparent)]
    Conn(#[from] ConnError),
    #[error(transparent)]
    Match(#[from] MatchError),
    #[error(transparent)]
    Schema(#[from] SchemaError),
    #[error("an output frame starts at {start}, but the stream so far ended at {end}")]
    Gap { start: u64, end: u64 },
    #[error("expected the end of the stream, got {0}")]
    NotTheEnd(Received),
    #[error("expected the end of the stream within {0:?}")]
    NoEnd(Duration),
    /// Output left over from an earlier expectation, where nothing was expected.
    #[error("expected nothing, got {0}")]
    Pending(Received),
    #[error("expected nothing for {pause:?}, got {got}")]
    Something { pause: Duration, got: Received },
    #[error("expected a control frame, got {0}")]
    NotControl(Received),
    #[error("expected a control frame, got nothing before the deadline")]
    NoControl,
    #[error("expected {count} output bytes, got {got} first, after {} bytes: {}", so_far.len(), show(so_far))]
    OutputInterrupted { count: usize, got: Received, so_far: Vec<u8> },
    #[error("expected {count} output bytes within {within:?}, got {}: {}", so_far.len(), show(so_far))]
    OutputShort { count: usize, within: Duration, so_far: Vec<u8> },
    #[error("expected output starting at {expected}, got output starting at {first}")]
    OutputStart { expected: Value, first: u64 },
    #[error("output from {0} differs")]
    OutputDiffers(u64),
    #[error("cannot start helper {program}: {cause}")]
    HelperStart { program: String, cause: std::io::Error },
    /// Whether a helper had exited could not be learnt.
    #[error("{0}")]
    HelperWait(std::io::Error),
    #[error("helper {program} {args:?} failed: {status}")]
    HelperFailed { program: String, args: Vec<String>, status: ExitStatus },
    #[error("helper {program} did not finish within {within:?}")]
    HelperLate { program: String, within: Duration },
    #[error("a payload over 4 GiB")]
    PayloadTooLarge,
    #[error("odd number of hex digits in {0:?}")]
    OddHex(String),
    #[error("not hex: {0:?}")]
    NotHex(String),
}

/// Why a step failed, and for a frame or output that differs, a diff of expected and received.
#[derive(Debug)]
pub(crate) struct Failure {
    /// Boxed: some errors carry what was received, and a failure is passed up through every step.
    pub error: Box<StepError>,
    pub diff: Option<String>,
}

impl<E: Into<StepError>> From<E> for Failure {
    fn from(error: E) -> Failure {
        Failure { error: Box::new(error.into()), diff: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message reads as the runner has always printed it (the tests of the suite and its users match on
    /// them).
    #[test]
    fn messages_keep_their_wording() {
        let output = |bytes: &[u8]| Received::Output { start: 3, bytes: bytes.to_vec() };
        let cases = [
            (StepError::NoSharedDaemon, "no shared daemon"),
            (StepError::ScratchNotUtf8, "the scratch directory's path is not UTF-8"),
            (StepError::NotOpen("a".into()), "connection `a` is not open"),
            (StepError::Malformed("an expect step needs a frame"), "an expect step needs a frame"),
            (StepError::Gap { start: 5, end: 4 }, "an output frame starts at 5, but the stream so far ended at 4"),
            (StepError::NotTheEnd(output(b"hi")), "expected the end of the stream, got output at 3: \"hi\""),
            (StepError::NoEnd(Duration::from_secs(3)), "expected the end of the stream within 3s"),
            (StepError::Pending(output(&[0xff])), "expected nothing, got output at 3: hex ff"),
            (
                StepError::Something { pause: Duration::from_millis(50), got: Received::Eof },
                "expected nothing for 50ms, got the end of the stream",
            ),
            (
                StepError::NotControl(Received::Control(serde_json::json!({"type": "ok"}))),
                "expected a control frame, got the control frame {\"type\":\"ok\"}",
            ),
            (StepError::NoControl, "expected a control frame, got nothing before the deadline"),
            (
                StepError::OutputInterrupted { count: 4, got: Received::Eof, so_far: b"ab".to_vec() },
                "expected 4 output bytes, got the end of the stream first, after 2 bytes: \"ab\"",
            ),
            (
                StepError::OutputShort { count: 4, within: Duration::from_secs(10), so_far: b"ab".to_vec() },
                "expected 4 output bytes within 10s, got 2: \"ab\"",
            ),
            (
                StepError::OutputStart { expected: serde_json::json!(0), first: 7 },
                "expected output starting at 0, got output starting at 7",
            ),
            (StepError::OutputDiffers(7), "output from 7 differs"),
            (
                StepError::HelperLate { program: "sh".into(), within: Duration::from_secs(10) },
                "helper sh did not finish within 10s",
            ),
            (StepError::PayloadTooLarge, "a payload over 4 GiB"),
            (StepError::OddHex("abc".into()), "odd number of hex digits in \"abc\""),
            (StepError::NotHex("zz".into()), "not hex: \"zz\""),
            (
                StepError::DaemonStart(DaemonError::Unanswered),
                "cannot start the daemon: the runner's own got no answer within 10s",
            ),
            (
                StepError::SharedDaemon(Arc::new(DaemonError::Refused { answer: "{}".into() })),
                "the shared daemon is not usable: the runner's own was answered {}",
            ),
            (StepError::Match(MatchError::Unbound { name: "id".into() }), "$id is not bound"),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
        let failed = std::process::Command::new("false").status().unwrap();
        let helper = StepError::HelperFailed { program: "false".into(), args: vec!["x".into()], status: failed };
        assert_eq!(helper.to_string(), "helper false [\"x\"] failed: exit status: 1");
    }
}
