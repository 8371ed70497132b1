//! Helpers for tests of the real daemon binary: a daemon in a temporary runtime directory (started by the
//! client's launcher), raw framed requests over its socket, and bounded waits. Every daemon is stopped when its
//! guard drops.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

use opencode_pty_client::launch::{Launch, LaunchedDaemon};
use opencode_pty_protocol::{Frame, Registration, read_frame};
use serde_json::{Value, json};

use super::poll::WAIT;

/// A daemon process and its runtime directory.
pub(crate) struct Daemon {
    pub root: tempfile::TempDir,
    pub name: String,
    pub registration: Registration,
    /// The daemon process, stopped (SIGTERM, then SIGKILL after [`WAIT`]) and reaped when the guard drops.
    process: LaunchedDaemon,
    /// Where its log (stderr) goes when the test does not take it: shown only if the test fails.
    log: Option<tempfile::NamedTempFile>,
}

/// The daemon binary.
pub(crate) fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_opencode-pty"))
}

impl Daemon {
    /// Starts `opencode-pty daemon` in a fresh root and waits for its registration.
    pub(crate) fn start() -> Daemon {
        Daemon::start_with(&[])
    }

    /// The same with extra daemon arguments.
    pub(crate) fn start_with(extra: &[&str]) -> Daemon {
        let root = tempfile::tempdir().expect("tempdir");
        Daemon::start_in(root, "test", extra)
    }

    /// Starts a daemon named `name` under `root`.
    pub(crate) fn start_in(root: tempfile::TempDir, name: &str, extra: &[&str]) -> Daemon {
        let launch = Launch::new(binary(), root.path(), name).args(extra);
        Daemon::launch(launch, root, name)
    }

    /// The daemon's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The daemon process, to kill and reap it by hand or to write to its stdin.
    pub(crate) fn child_mut(&mut self) -> &mut Child {
        self.process.child_mut()
    }

    /// The runtime directory.
    pub(crate) fn dir(&self) -> PathBuf {
        self.root.path().join(&self.name)
    }

    /// A connection to the daemon's socket.
    pub(crate) fn connect(&self) -> UnixStream {
        let stream = UnixStream::connect(&self.registration.socket).expect("connect");
        stream.set_read_timeout(Some(WAIT)).unwrap();
        stream
    }

    /// Sends `request` with the right token on a new connection and returns the one response.
    pub(crate) fn request(&self, request: Value) -> Value {
        let mut stream = self.connect();
        send(&mut stream, &json!({"token": self.registration.token, "request": request}));
        recv(&mut stream).expect("a response")
    }

    /// Claims the daemon; the returned stream is the owner channel.
    pub(crate) fn own(&self) -> UnixStream {
        let mut stream = self.connect();
        send(&mut stream, &self.envelope(json!({"op": "own", "instance_id": self.registration.instance_id})));
        assert_eq!(recv(&mut stream).expect("owned")["type"], "owned");
        stream
    }

    /// `request` wrapped in an envelope with this daemon's token.
    pub(crate) fn envelope(&self, request: Value) -> Value {
        json!({"token": self.registration.token, "request": request})
    }

    /// Waits (bounded, on the exit itself) for the daemon to exit.
    pub(crate) fn wait_exit(&mut self) -> ExitStatus {
        let status = self.process.wait_exit(WAIT).expect("wait for the daemon");
        status.unwrap_or_else(|| panic!("the daemon to exit: not within {WAIT:?}"))
    }
}

impl Drop for Daemon {
    /// Stops the daemon the orderly way (SIGTERM), so it takes its children and files with it; kills it if
    /// that takes too long, and then removes the socket it could not.
    fn drop(&mut self) {
        let _ = self.process.stop(WAIT);
        let _ = std::fs::remove_file(&self.registration.socket);
        if std::thread::panicking()
            && let Some(log) = &self.log
            && let Ok(text) = std::fs::read_to_string(log.path())
            && !text.is_empty()
        {
            // Captured with the failing test's output, and shown with it.
            eprintln!("--- the daemon's log ---\n{text}--- end of the daemon's log ---");
        }
    }
}

/// The message of an `error` answer (failing the test if `response` is not one).
pub(crate) fn message(response: &Value) -> &str {
    assert_eq!(response["type"], "error", "{response}");
    response["message"].as_str().expect("message")
}

/// Writes one control frame.
pub(crate) fn send(stream: &mut UnixStream, value: &Value) {
    let Value::Object(map) = value else { panic!("not an object") };
    stream.write_all(&opencode_pty_protocol::encode_control(map).unwrap()).expect("send");
}

/// Reads one control frame as JSON; `None` at the end of the stream.
pub(crate) fn recv(stream: &mut UnixStream) -> Option<Value> {
    match read_frame(stream).expect("a frame") {
        Some(Frame::Control(map)) => Some(Value::Object(map)),
        Some(Frame::Output { start, .. }) => panic!("unexpected output frame at {start}"),
        None => None,
    }
}

/// Reads one frame of either kind; `None` at the end of the stream.
pub(crate) fn recv_frame(stream: &mut UnixStream) -> Option<Frame> {
    read_frame(stream).expect("a frame")
}

/// A `create_pty` request for `sh -c script`.
pub(crate) fn create_sh(script: &str) -> Value {
    json!({"op": "create_pty", "program": "sh", "args": ["-c", script], "cwd": "/", "env": {}, "group_id": "g",
           "title": "t", "cols": 80, "rows": 24})
}

/// How many threads of process `pid` have a name starting with `prefix` (the kernel keeps 15 bytes of it).
pub(crate) fn threads_named(pid: u32, prefix: &str) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    let prefix = &prefix[..prefix.len().min(15)];
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
        .filter(|name| name.trim_end().starts_with(prefix))
        .count()
}

impl Daemon {
    /// Starts `opencode-pty daemon` in a fresh root with `vars` added to the environment it inherits, and waits
    /// for its registration.
    pub(crate) fn start_with_env(vars: &[(&str, &str)]) -> Daemon {
        Daemon::start_with_env_and(vars, &[])
    }

    /// The same with extra daemon arguments.
    pub(crate) fn start_with_env_and(vars: &[(&str, &str)], extra: &[&str]) -> Daemon {
        let root = tempfile::tempdir().expect("tempdir");
        let mut launch = Launch::new(binary(), root.path(), "test").args(extra);
        for (variable, value) in vars {
            launch = launch.env(variable, value);
        }
        Daemon::launch(launch, root, "test")
    }

    /// Starts `opencode-pty daemon` in a fresh root with `signals` ignored, as a careless launcher would leave
    /// them (names without `SIG`, like `USR1`): Python ignores them and then execs the daemon in its place (same
    /// pid), and an ignored disposition survives `exec`. (dash's `trap ''` does not keep SIGCHLD ignored.)
    pub(crate) fn start_ignoring(signals: &[&str]) -> Daemon {
        let root = tempfile::tempdir().expect("tempdir");
        let script = "import os, signal, sys\n\
                      for name in sys.argv[1].split(','): signal.signal(getattr(signal, 'SIG' + name), signal.SIG_IGN)\n\
                      os.execv(sys.argv[2], sys.argv[2:])";
        require_python3("start a daemon with signals ignored");
        let launch =
            Launch::new(binary(), root.path(), "test").exec_through("python3", ["-c", script, &signals.join(",")]);
        Daemon::launch(launch, root, "test")
    }

    /// Starts `opencode-pty daemon` in a fresh root with its stdin a pipe that already holds `data` and stays
    /// open (the write end lives in the child's stdin until the guard drops), and waits for its registration.
    pub(crate) fn start_with_stdin_data(data: &[u8]) -> Daemon {
        let root = tempfile::tempdir().expect("tempdir");
        let launch = Launch::new(binary(), root.path(), "test").stdin(Stdio::piped());
        let mut daemon = Daemon::launch(launch, root, "test");
        // Far less than a pipe's capacity, so this never blocks, whether or not anything reads.
        let stdin = daemon.child_mut().stdin.as_mut().expect("the stdin pipe");
        stdin.write_all(data).expect("fill the daemon's stdin");
        daemon
    }

    /// Starts `launch` (a daemon named `name` under `root`, possibly through an `exec`ing wrapper) and waits for
    /// its registration; its log is kept aside and shown only for a failing test, not mixed into every test's
    /// output.
    fn launch(launch: Launch, root: tempfile::TempDir, name: &str) -> Daemon {
        let log = tempfile::NamedTempFile::new().expect("a log file");
        let stderr = Stdio::from(log.reopen().expect("the log file"));
        let mut daemon = Daemon::launch_with(launch.stderr(stderr), root, name);
        daemon.log = Some(log);
        daemon
    }

    /// Starts `opencode-pty daemon` with a relative `--runtime-dir` (`.`, its working directory being a fresh
    /// root), and waits for its registration.
    pub(crate) fn start_relative() -> Daemon {
        let root = tempfile::tempdir().expect("tempdir");
        let launch = Launch::new(binary(), ".", "test").current_dir(root.path());
        Daemon::launch(launch, root, "test")
    }

    /// Starts `opencode-pty daemon` in a fresh root with its log (stderr) written to `log`, and waits for its
    /// registration.
    pub(crate) fn start_logging_to(log: &Path) -> Daemon {
        Daemon::start_logging_at(log, None)
    }

    /// [`Daemon::start_logging_to`] with `filter` as its `RUST_LOG` (when given).
    pub(crate) fn start_logging_at(log: &Path, filter: Option<&str>) -> Daemon {
        let root = tempfile::tempdir().expect("tempdir");
        let mut launch = Launch::new(binary(), root.path(), "test");
        if let Some(filter) = filter {
            launch = launch.env("RUST_LOG", filter);
        }
        let file = std::fs::File::create(log).expect("create the log file");
        Daemon::launch_with(launch.stderr(Stdio::from(file)), root, "test")
    }

    /// Starts `launch` and waits (bounded by [`WAIT`]) for the registration.
    fn launch_with(mut launch: Launch, root: tempfile::TempDir, name: &str) -> Daemon {
        // Only warnings and errors from test daemons, unless the run asks for more.
        if !launch.sets_env("RUST_LOG") && std::env::var_os("RUST_LOG").is_none() {
            launch = launch.env("RUST_LOG", "warn");
        }
        let process = launch.deadline(WAIT).stop_grace(WAIT).start().unwrap_or_else(|e| panic!("{e}"));
        let registration = process.registration().clone();
        Daemon { root, name: name.into(), registration, process, log: None }
    }
}

/// Panics with a clear message unless `python3` can be run (some tests launch through it, to `why`).
pub(crate) fn require_python3(why: &str) {
    let found = Command::new("python3").arg("--version").stdin(Stdio::null()).stdout(Stdio::null()).status();
    if let Err(error) = found {
        panic!("this test needs python3 on PATH to {why}, and it cannot be run: {error}");
    }
}

impl Daemon {
    /// Sends `subscribe` for `id` from offset 0 on a new connection, and returns it with the answer
    /// (`attached`, or an `error`).
    pub(crate) fn subscribe(&self, id: u64, attachment: &str, role: &str) -> (UnixStream, Value) {
        let mut stream = self.connect();
        let subscribe = json!({"op": "subscribe", "id": id, "offset": 0, "attachment_id": attachment, "role": role,
                               "takeover": false});
        send(&mut stream, &self.envelope(subscribe));
        let answer = recv(&mut stream).expect("an answer to subscribe");
        (stream, answer)
    }
}

/// Everything a subscription carries after `attached` until the daemon closes it: the replay followed by the
/// live output, and the JSON events in order.
pub(crate) fn read_subscription(stream: &mut UnixStream, attached: &Value) -> (Vec<u8>, Vec<Value>) {
    use base64::Engine;
    let replay = attached["replay_base64"].as_str().expect("replay_base64");
    let mut output = base64::engine::general_purpose::STANDARD.decode(replay).expect("base64");
    let mut messages = Vec::new();
    while let Some(frame) = recv_frame(stream) {
        match frame {
            Frame::Output { bytes, .. } => output.extend_from_slice(&bytes),
            Frame::Control(map) => messages.push(Value::Object(map)),
        }
    }
    (output, messages)
}

/// The replay an `attached` answer carries, decoded.
pub(crate) fn replay_of(attached: &Value) -> Vec<u8> {
    use base64::Engine;
    let replay = attached["replay_base64"].as_str().unwrap_or_else(|| panic!("no replay in {attached}"));
    base64::engine::general_purpose::STANDARD.decode(replay).expect("base64")
}

/// Reads a subscription's frames, appending output to `output` (which starts as the replay) and collecting the
/// JSON events, until `done(output as text, events)` holds: the way a test waits for what the daemon says.
/// Panics if the daemon closes the subscription first, or after [`WAIT`].
pub(crate) fn frames_until(
    stream: &mut UnixStream,
    output: &mut Vec<u8>,
    what: &str,
    done: impl Fn(&str, &[Value]) -> bool,
) -> Vec<Value> {
    let deadline = std::time::Instant::now() + WAIT;
    let mut messages = Vec::new();
    while !done(&String::from_utf8_lossy(output), &messages) {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not within {WAIT:?}; output {:?}",
            String::from_utf8_lossy(output)
        );
        match recv_frame(stream) {
            Some(Frame::Output { bytes, .. }) => output.extend_from_slice(&bytes),
            Some(Frame::Control(map)) => messages.push(Value::Object(map)),
            None => panic!(
                "{what}: the subscription ended first; output {:?}, events {messages:?}",
                String::from_utf8_lossy(output)
            ),
        }
    }
    messages
}

impl Daemon {
    /// Starts a daemon named `name` under `root` with `extra` arguments, the environment changed by `env` (a
    /// variable set, or removed with `None`), and its log (stderr) written to `log`; waits for its registration.
    pub(crate) fn start_configured(
        root: tempfile::TempDir,
        name: &str,
        extra: &[&str],
        env: &[(&str, Option<&str>)],
        log: &Path,
    ) -> Daemon {
        let mut launch = Launch::new(binary(), root.path(), name).args(extra);
        for (variable, value) in env {
            launch = match value {
                Some(value) => launch.env(variable, value),
                None => launch.env_remove(variable),
            };
        }
        let file = std::fs::File::create(log).expect("create the log file");
        Daemon::launch_with(launch.stderr(Stdio::from(file)), root, name)
    }
}

/// A process's resident anonymous memory (its heap and the emulators' pages; not the pages of its binary and
/// libraries, which the first use of a code path brings in), in KiB.
pub(crate) fn anon_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the daemon's status");
    let line = status.lines().find(|line| line.starts_with("RssAnon:")).expect("RssAnon");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("RssAnon in KiB")
}
