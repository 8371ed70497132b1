//! The Linux arm64 daemon under emulation (issue 32). When `OPENCODE_PTY_ARM64_DAEMON` names a daemon
//! cross-built for `aarch64-unknown-linux-gnu`, it is started through `packaging/emulate-aarch64.sh` (qemu-user)
//! and must pass the conformance suite, but for the transcripts qemu-user itself keeps from passing
//! ([`QEMU_CANNOT_PASS`]), and a PTY smoke test: create, input, echo, snapshot, terminate, shutdown; its release
//! archive (`packaging/dist.sh`) and npm package (`packaging/npm.sh`, `opencode-pty-linux-arm64`) are checked too.
//! Without the variable the tests say so and pass; `.ci/run` cross-builds the daemon and sets it.

mod support;

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use base64::Engine as _;
use opencode_pty_client::launch::Launch;
use opencode_pty_protocol::{Frame, Registration, encode_control, read_frame};
use serde_json::{Value, json};

/// The variable naming the cross-built daemon.
const DAEMON_VAR: &str = "OPENCODE_PTY_ARM64_DAEMON";

/// Why a failed `exec` looks like a start under qemu-user.
const SPAWN: &str = "qemu-user runs posix_spawn's shared-memory clone (CLONE_VM | CLONE_VFORK) as a plain fork, so \
                     the C library's child cannot report a failed exec: a missing program is created, then exits 127";
/// Why a password prompt is not recognised under qemu-user.
const SYSCALLS: &str = "the shells the emulated daemon starts are native x86-64 programs, so /proc/PID/syscall gives \
                        x86-64 system call numbers, which the daemon reads as AArch64 ones";
/// Why an extra foreground change is seen under qemu-user.
const EARLY_CHILD: &str = "the same plain fork lets a new terminal find, as it starts, its child not yet executed \
                           (named as the daemon), so a later get or list announces a foreground_process_changed the \
                           transcript does not expect";

/// The transcripts that fail because of qemu-user, not of the daemon, each with why; on arm64 hardware none of
/// these causes exists.
const QEMU_CANNOT_PASS: [(&str, &str); 3] =
    [("pipe/validation", SPAWN), ("terminal/create-pty-errors", SPAWN), ("input/opt-in", SYSCALLS)];

/// The signature of [`EARLY_CHILD`] in a failure the runner reports, which any transcript whose terminal starts
/// and then asks for its foreground process may show (it depends on timing).
const EARLY_CHILD_EVENT: &str = r#""foreground_process_changed""#;

/// The fewest transcripts that must pass under emulation (66 at the time of writing, 61 or 62 of them under qemu).
const MIN_PASSED: usize = 55;

/// How long an emulated daemon gets to register: qemu starts it several times slower than a native one.
const START_DEADLINE: Duration = Duration::from_secs(60);

/// The longest the smoke test waits for one answer, one piece of output or one change it is waiting for.
const WAIT: Duration = Duration::from_secs(30);

/// The cross-built daemon named by [`DAEMON_VAR`] (a relative path is taken from the workspace's root), or
/// `None`: the test is skipped, and says so.
fn arm64_daemon() -> Option<PathBuf> {
    let Some(path) = std::env::var_os(DAEMON_VAR).filter(|path| !path.is_empty()) else {
        eprintln!("skipped: {DAEMON_VAR} is not set (.ci/run cross-builds the arm64 daemon and sets it)");
        return None;
    };
    let path = workspace().join(path);
    assert!(path.is_file(), "{DAEMON_VAR}: {} is no file", path.display());
    // The emulator's own complaint (qemu missing, no user namespace), which a daemon started through it would
    // only show as an exit before its registration.
    let mut probe = std::process::Command::new(emulator());
    probe.arg("true");
    let probe = support::run_command(probe);
    assert_eq!(probe.code, Some(0), "packaging/emulate-aarch64.sh cannot run here:\n{}", probe.stderr);
    Some(path)
}

/// The workspace's root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace holds this crate").to_owned()
}

/// The script that runs a program under qemu-user, with every aarch64 program it executes.
fn emulator() -> PathBuf {
    workspace().join("packaging/emulate-aarch64.sh")
}

#[test]
fn the_emulated_arm64_daemon_passes_the_conformance_suite() {
    let Some(daemon) = arm64_daemon() else { return };
    let emulator = emulator();
    let args = [
        "--daemon",
        daemon.to_str().expect("UTF-8 path"),
        "--exec-through",
        emulator.to_str().expect("UTF-8 path"),
        "--strict-messages",
        "--start-timeout-ms",
        "60000",
    ];
    let run = support::run(&args, &[]);
    let report = format!("{}\n{}", run.stdout, run.stderr);
    assert!(matches!(run.code, Some(0 | 1)), "the suite could not run against the emulated daemon:\n{report}");
    for failure in failures(&run.stdout) {
        let name = failure.lines().next().and_then(|line| line.split_whitespace().nth(1)).unwrap_or_default();
        let why = QEMU_CANNOT_PASS.iter().find(|(known, _)| *known == name).map(|(_, why)| *why);
        let why = why.or_else(|| is_early_child(&failure).then_some(EARLY_CHILD));
        match why {
            Some(why) => eprintln!("{name} fails under qemu-user, as expected: {why}"),
            None => panic!("{name} failed against the emulated arm64 daemon:\n{report}"),
        }
    }
    let passed = run.stdout.lines().filter(|line| line.starts_with("PASS ")).count();
    assert!(passed >= MIN_PASSED, "only {passed} transcripts passed under emulation:\n{report}");
}

#[test]
fn the_emulated_arm64_daemon_runs_a_terminal() {
    let Some(binary) = arm64_daemon() else { return };
    let root = tempfile::tempdir().expect("tempdir");
    // Stopped (and reaped) when the test ends, however it ends.
    let mut daemon = Launch::new(&binary, root.path(), "arm64")
        .exec_through(emulator(), std::iter::empty::<&str>())
        .deadline(START_DEADLINE)
        .start()
        .expect("start the emulated daemon");
    let pid = daemon.pid();
    let registration = daemon.registration().clone();
    // Emulated indeed: the process the kernel runs is qemu, and so is the guardian, which the daemon starts by
    // executing itself again (`/proc/self/exe guard`), what qemu-user alone cannot do.
    assert_eq!(executable_name(pid).as_deref(), Some("qemu-aarch64"), "the daemon's process");
    let guardian = wait_for("the guardian", || guardian_of(pid));
    assert_eq!(executable_name(guardian).as_deref(), Some("qemu-aarch64"), "the guardian's process");

    let script = "printf 'ready>'; read line; printf 'got [%s]\\n' \"$line\"; read never";
    let created = request(
        &registration,
        json!({"op": "create_pty", "program": "sh", "args": ["-c", script],
        "cwd": "/", "env": {}, "group_id": "smoke", "title": "smoke", "cols": 40, "rows": 6}),
    );
    assert_eq!(created["type"], "created", "{created}");
    let id = created["process"]["id"].as_u64().expect("an id");
    let child = u32::try_from(created["process"]["pid"].as_u64().expect("a pid")).expect("a pid");

    let mut subscription = connect(&registration);
    send(
        &mut subscription,
        &registration,
        json!({"op": "subscribe", "id": id, "offset": 0,
        "attachment_id": "smoke", "role": "controller", "takeover": false}),
    );
    let attached = receive(&mut subscription).expect("an answer to subscribe");
    assert_eq!(attached["type"], "attached", "{attached}");
    let replay = attached["replay_base64"].as_str().expect("replay_base64");
    let mut output = base64::engine::general_purpose::STANDARD.decode(replay).expect("base64");
    read_until(&mut subscription, &mut output, "ready>");

    let data = base64::engine::general_purpose::STANDARD.encode("hello arm64\r");
    let written = request(
        &registration,
        json!({"op": "write", "id": id, "attachment_id": "smoke",
        "data_base64": data}),
    );
    assert_eq!(written["type"], "ok", "{written}");
    // The terminal echoes the line as typed, then the shell answers it.
    read_until(&mut subscription, &mut output, "ready>hello arm64\r\ngot [hello arm64]\r\n");

    let snapshot = request(&registration, json!({"op": "snapshot", "id": id}));
    assert_eq!(snapshot["type"], "snapshot", "{snapshot}");
    assert_eq!(snapshot["text"], "ready>hello arm64\ngot [hello arm64]", "{snapshot}");
    assert_eq!((&snapshot["cursor_x"], &snapshot["cursor_y"]), (&json!(0), &json!(2)), "{snapshot}");
    assert!(snapshot["checkpoint_base64"].as_str().is_some_and(|c| !c.is_empty()), "{snapshot}");

    let terminated = request(&registration, json!({"op": "terminate", "id": id}));
    assert_eq!(terminated["type"], "ok", "{terminated}");
    wait_for("the terminal's shell to be gone", || (!support::process_exists(child)).then_some(()));
    let forgotten = request(&registration, json!({"op": "get", "id": id}));
    assert_eq!(forgotten["type"], "error", "{forgotten}");
    drop(subscription);

    let stopped = request(&registration, json!({"op": "shutdown"}));
    assert_eq!(stopped["type"], "ok", "{stopped}");
    let status = daemon.wait_exit(WAIT).expect("wait for the daemon").expect("the daemon to exit after shutdown");
    assert!(status.success(), "the emulated daemon exited with {status}");
    wait_for("the guardian to be gone", || (!support::process_exists(guardian)).then_some(()));
}

#[test]
fn the_arm64_daemon_packs_into_its_archive_and_npm_package() {
    let Some(binary) = arm64_daemon() else { return };
    let out = tempfile::tempdir().expect("tempdir");
    let mut dist = std::process::Command::new("bash");
    dist.arg(workspace().join("packaging/dist.sh")).arg("--binary").arg(&binary).arg("--out").arg(out.path());
    let built = support::run_command(dist);
    assert_eq!(built.code, Some(0), "packaging/dist.sh failed:\n{}", built.stderr);
    let archive = PathBuf::from(built.stdout.lines().last().expect("the archive's path"));
    let name = archive.file_name().and_then(|n| n.to_str()).expect("a name").trim_end_matches(".tar.gz").to_owned();
    assert!(name.starts_with("opencode-pty-") && name.ends_with("-aarch64-unknown-linux-gnu"), "{name}");

    let unpacked = tempfile::tempdir().expect("tempdir");
    let mut tar = std::process::Command::new("tar");
    tar.arg("-xzf").arg(&archive).arg("-C").arg(unpacked.path());
    assert_eq!(support::run_command(tar).code, Some(0), "unpack {}", archive.display());
    let folder = unpacked.path().join(&name);
    for file in ["opencode-pty", "libghostty-vt.so.0"] {
        assert!(readelf(&["-h"], &folder.join(file)).contains("AArch64"), "{file} is built for AArch64");
    }
    let dynamic = readelf(&["-d"], &folder.join("opencode-pty"));
    assert!(dynamic.contains("Library runpath: [$ORIGIN]\n"), "{dynamic}");
    let sections = readelf(&["-S", "-W"], &folder.join("opencode-pty"));
    assert!(!sections.contains(".symtab") && sections.contains(".gnu_debuglink"), "stripped:\n{sections}");
    // It runs from the unpacked folder, on the library beside it (its run path names nothing else).
    let mut version = std::process::Command::new(emulator());
    version.arg(folder.join("opencode-pty")).arg("--version");
    let answered = support::run_command(version);
    assert!(answered.stdout.starts_with("opencode-pty "), "{answered:?}");

    let mut npm = std::process::Command::new("bash");
    npm.arg(workspace().join("packaging/npm.sh")).arg(&archive).arg("--out").arg(out.path());
    let packed = support::run_command(npm);
    assert_eq!(packed.code, Some(0), "packaging/npm.sh failed:\n{}", packed.stderr);
    let package = PathBuf::from(packed.stdout.lines().last().expect("the package's path"));
    let file = package.file_name().and_then(|n| n.to_str()).expect("a name");
    assert!(file.starts_with("opencode-pty-linux-arm64-") && package.is_file(), "{}", package.display());
    let mut manifest = std::process::Command::new("tar");
    manifest.arg("-xzOf").arg(&package).arg("package/package.json");
    let manifest: Value = serde_json::from_str(&support::run_command(manifest).stdout).expect("package.json");
    assert_eq!(manifest["name"], "opencode-pty-linux-arm64", "{manifest}");
    assert_eq!(manifest["cpu"], json!(["arm64"]), "{manifest}");
    assert_eq!(manifest["os"], json!(["linux"]), "{manifest}");
}

/// What `readelf ARGS FILE` prints.
fn readelf(args: &[&str], file: &Path) -> String {
    let mut readelf = std::process::Command::new("readelf");
    readelf.args(args).arg(file);
    let run = support::run_command(readelf);
    assert_eq!(run.code, Some(0), "readelf {args:?} {}: {}", file.display(), run.stderr);
    run.stdout
}

/// Each failure the runner reported: its `FAIL` line and the indented lines that explain it.
fn failures(stdout: &str) -> Vec<String> {
    let mut failures: Vec<String> = Vec::new();
    let mut inside = false;
    for line in stdout.lines() {
        if line.starts_with("FAIL ") {
            failures.push(format!("{line}\n"));
            inside = true;
        } else if inside && line.starts_with(' ') {
            failures.last_mut().expect("a failure").push_str(&format!("{line}\n"));
        } else {
            inside = false;
        }
    }
    failures
}

/// Whether a failure is [`EARLY_CHILD`]'s: the step expected something else and got a foreground change.
fn is_early_child(failure: &str) -> bool {
    let mut lines = failure.lines().skip(1);
    let step = lines.next().unwrap_or_default();
    !step.contains(EARLY_CHILD_EVENT) && lines.any(|line| line.contains(EARLY_CHILD_EVENT))
}

/// The file name of the program process `pid` runs, as the kernel sees it.
fn executable_name(pid: u32) -> Option<String> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
    Some(exe.file_name()?.to_string_lossy().into_owned())
}

/// The child of `daemon` that runs the hidden `guard` command, if it has started.
fn guardian_of(daemon: u32) -> Option<u32> {
    let children = std::fs::read_to_string(format!("/proc/{daemon}/task/{daemon}/children")).ok()?;
    children.split_whitespace().filter_map(|pid| pid.parse().ok()).find(|pid: &u32| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        cmdline.split(|b| *b == 0).any(|arg| arg == b"guard")
    })
}

/// Polls `found` until it gives a value, for at most [`WAIT`].
fn wait_for<T>(what: &str, mut found: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(value) = found() {
            return value;
        }
        assert!(Instant::now() < deadline, "{what}: not within {WAIT:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn connect(registration: &Registration) -> UnixStream {
    let stream = UnixStream::connect(&registration.socket).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("read timeout");
    stream
}

fn send(stream: &mut UnixStream, registration: &Registration, request: Value) {
    let Value::Object(envelope) = json!({"token": registration.token, "request": request}) else { unreachable!() };
    stream.write_all(&encode_control(&envelope).expect("encode")).expect("send");
}

/// The next control frame, skipping none: `None` at the end of the stream.
fn receive(stream: &mut UnixStream) -> Option<Value> {
    match read_frame(stream).expect("a frame") {
        Some(Frame::Control(map)) => Some(Value::Object(map)),
        Some(Frame::Output { start, .. }) => panic!("output at {start} where a control frame was due"),
        None => None,
    }
}

/// Sends `request` on a connection of its own and returns the one answer.
fn request(registration: &Registration, request: Value) -> Value {
    let mut stream = connect(registration);
    send(&mut stream, registration, request);
    receive(&mut stream).expect("an answer")
}

/// Reads the subscription's output into `output` until it holds `text`; events are passed over.
fn read_until(stream: &mut UnixStream, output: &mut Vec<u8>, text: &str) {
    let deadline = Instant::now() + WAIT;
    while !String::from_utf8_lossy(output).contains(text) {
        let seen = String::from_utf8_lossy(output).into_owned();
        assert!(Instant::now() < deadline, "{text:?}: not within {WAIT:?}; output {seen:?}");
        match read_frame(stream).expect("a frame") {
            Some(Frame::Output { bytes, .. }) => output.extend_from_slice(&bytes),
            Some(Frame::Control(_)) => {}
            None => panic!("{text:?}: the subscription ended first; output {seen:?}"),
        }
    }
}
