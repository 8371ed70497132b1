//! The client across an in-place upgrade of the real daemon binary (issue 30, SPEC CL10): `Owner::upgrade` to a
//! private copy of this build while a terminal prints numbered lines; its controller and observer subscriptions
//! each yield one `Event::Resumed` and go on with contiguous offsets, the bytes exactly the child's, the
//! controller the controller again (its `Resumed` says so and its `write` is taken); a `wait` held across the
//! upgrade is answered with the exit, and a `wait_command` with the command's end. After a real crash (SIGKILL) a subscription and a `wait` end at once, as
//! before resuming existed. The daemon is the `opencode-pty` built next to this test (`cargo build -p
//! opencode-pty`).

use std::os::fd::{AsFd as _, OwnedFd};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal as Sig, kill};
use nix::unistd::Pid;
use opencode_pty_client::launch::{Launch, LaunchedDaemon};
use opencode_pty_client::{
    Client, ClientError, CommandOutcome, CreatePipe, CreatePty, Event, InputWait, OptIn, RESUME_WINDOW, Response,
    Resumed, Role, Subscription, Takeover,
};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The bound on each test: generous for a loaded 2-core machine.
const TEST_LIMIT: Duration = Duration::from_secs(120);

/// The bound on each wait for something a follower must see.
const WAIT: Duration = Duration::from_secs(30);

/// Lines each follower must see before the upgrade, and again after it.
const LINES: u64 = 200;

/// A terminal that prints `1`, `2`, ... (ten lines, then a 10 ms pause) until it is sent SIGUSR1, then `end`;
/// then it reads a line and answers `got LINE`. Its terminal does not echo, so its output is known exactly.
const PRINTER: &str = "stty -echo; trap 'stop=1' USR1; i=0; while [ -z \"$stop\" ]; do i=$((i+1)); echo $i; \
                       case $i in *0) sleep 0.01;; esac; done; echo end; read line; echo \"got $line\"; \
                       exec sleep 600";

/// A pipe process that exits with 9 once it is sent SIGUSR1.
const EXITS_ON_USR1: &str = "trap 'exit 9' USR1; while :; do sleep 0.02; done";

/// What the printer writes after its numbered lines, once it was sent `hello`.
const TAIL: &[u8] = b"end\r\ngot hello\r\n";

/// A daemon in a fresh runtime directory and a client for it.
fn start(root: &Path) -> (LaunchedDaemon, Client) {
    let daemon =
        Launch::new(opencode_pty_testkit::daemon_binary(), root, "upgrade").start().expect("the daemon starts");
    let client = Client::from_registration(daemon.registration().clone());
    (daemon, client)
}

/// A private copy of the daemon binary (mode 0755 in `dir`, made 0700), by `cp`: no descriptor of this test
/// process ever holds it open for writing, so no fork elsewhere in the test can make it busy (ETXTBSY).
fn private_copy(dir: &Path) -> PathBuf {
    let copy = dir.join("opencode-pty");
    let status = Command::new("cp").arg(opencode_pty_testkit::daemon_binary()).arg(&copy).status().expect("run cp");
    assert!(status.success(), "cp the binary: {status}");
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).expect("chmod the copy");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).expect("chmod its directory");
    copy
}

/// Sends SIGUSR1 to a child of the daemon.
fn usr1(pid: u32) {
    kill(Pid::from_raw(i32::try_from(pid).expect("a pid")), Sig::SIGUSR1).expect("SIGUSR1");
}

/// A pidfd of process `pid` (a child of the daemon), to learn when it exits.
fn watch_exit(pid: u32) -> OwnedFd {
    let pid = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw).expect("a pid");
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).expect("pidfd_open")
}

/// Waits, within [`WAIT`], for the process whose pidfd is `pidfd` to exit: the pidfd becomes readable.
async fn exited(pidfd: OwnedFd) {
    let polled = tokio::task::spawn_blocking(move || {
        let mut fds = [PollFd::new(pidfd.as_fd(), PollFlags::POLLIN)];
        let timeout = PollTimeout::try_from(WAIT).expect("a poll timeout");
        loop {
            match poll(&mut fds, timeout) {
                Err(nix::errno::Errno::EINTR) => {}
                other => return other,
            }
        }
    });
    let ready = polled.await.expect("the poll").expect("poll a pidfd");
    assert_eq!(ready, 1, "a child of the daemon still runs after {WAIT:?}");
}

/// `sh -c script` in a terminal: its id and its shell's pid.
async fn printer(client: &Client) -> (u64, u32) {
    let params = CreatePty { args: vec!["-c".into(), PRINTER.into()], ..CreatePty::new("sh", "/") };
    let process = client.create_pty(params).await.expect("create_pty");
    (process.id, process.pid.expect("a running terminal's pid"))
}

/// A pipe process running [`EXITS_ON_USR1`], writing into `dir`: its id and pid.
async fn exits_on_usr1(client: &Client, dir: &Path) -> (u64, u32) {
    let output = dir.join("pipe.log").to_str().expect("UTF-8").to_owned();
    let params =
        CreatePipe { args: vec!["-c".into(), EXITS_ON_USR1.into()], ..CreatePipe::new("/bin/sh", "/", output) };
    let process = client.create_pipe(params).await.expect("create_pipe");
    (process.id, process.pid.expect("a running process's pid"))
}

/// How far a follower got: the lines it saw whole, how many times it resumed, whether it saw `end`.
#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    lines: u64,
    resumed: usize,
    ended: bool,
}

/// What a follower saw: every byte from offset 0, and each `Resumed` with the number of bytes seen before it.
#[derive(Debug)]
struct Followed {
    bytes: Vec<u8>,
    resumed: Vec<(Resumed, u64)>,
}

/// Reads `subscription` (attached at offset 0) until the printer's last words, publishing its progress;
/// checks that each output chunk starts at the number of bytes seen so far.
fn follow(mut subscription: Subscription, progress: watch::Sender<Progress>) -> JoinHandle<Followed> {
    tokio::spawn(async move {
        let attached = subscription.attached();
        assert_eq!((attached.available_offset, attached.end_offset), (0, attached.replay.len() as u64));
        let mut followed = Followed { bytes: attached.replay.clone(), resumed: Vec::new() };
        while !followed.bytes.ends_with(TAIL) {
            let event = subscription.next().await.expect("the subscription goes on").expect("an event");
            let seen = followed.bytes.len() as u64;
            match event {
                Event::Output { start, bytes } => {
                    assert_eq!(start, seen, "output continues where it stopped");
                    followed.bytes.extend_from_slice(&bytes);
                }
                Event::Resumed(resumed) => followed.resumed.push((*resumed, seen)),
                // The foreground process (`sleep`) coming and going.
                Event::Message(message) => assert!(!matches!(*message, Response::Exited { .. }), "{message:?}"),
            }
            progress.send_replace(Progress {
                lines: followed.bytes.iter().filter(|b| **b == b'\n').count() as u64,
                resumed: followed.resumed.len(),
                ended: followed.bytes.windows(5).any(|w| w == b"end\r\n"),
            });
        }
        followed
    })
}

/// Waits until `progress` satisfies `done`, within [`WAIT`].
async fn reach(progress: &mut watch::Receiver<Progress>, what: &str, done: impl FnMut(&Progress) -> bool) {
    let reached = matches!(tokio::time::timeout(WAIT, progress.wait_for(done)).await, Ok(Ok(_)));
    assert!(reached, "{what}: not within {WAIT:?} ({:?})", *progress.borrow());
}

/// Checks `bytes` is `1\r\n2\r\n...K\r\n` followed by [`TAIL`], for some K > 2 [`LINES`], and returns K.
fn numbered(bytes: &[u8]) -> u64 {
    let lines = bytes.strip_suffix(TAIL).expect("the printer's last words at the end");
    let text = String::from_utf8(lines.to_vec()).expect("the lines are ASCII");
    let mut count = 0u64;
    for line in text.split_terminator("\r\n") {
        count += 1;
        assert_eq!(line, count.to_string(), "line {count}: no gap, no repeat");
    }
    assert!(text.ends_with("\r\n") && count > 2 * LINES, "{count} lines");
    count
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_and_a_wait_go_on_across_an_upgrade_with_every_byte_once() {
    let root = tempfile::tempdir().expect("tempdir");
    let copy_dir = tempfile::tempdir().expect("tempdir");
    let (daemon, client) = start(root.path());
    tokio::time::timeout(TEST_LIMIT, async {
        let mut owner = client.own(None).await.expect("own");
        let program = private_copy(copy_dir.path());
        let before = client.ping().await.expect("ping");
        assert!(before.features.iter().any(|f| f == opencode_pty_client::UPGRADE_FEATURE), "{before:?}");

        let (pipe, pipe_pid) = exits_on_usr1(&client, root.path()).await;
        let waiter = client.clone();
        let wait = tokio::spawn(async move { waiter.wait(pipe).await });
        let (id, shell_pid) = printer(&client).await;
        let controller = client.subscribe(id, 0, "ctl", Role::Controller, Takeover::Refuse).await.expect("ctl");
        let observer = client.subscribe(id, 0, "obs", Role::Observer, Takeover::Refuse).await.expect("obs");
        assert_eq!((controller.attached().role, observer.attached().role), (Role::Controller, Role::Observer));
        let generation = controller.attached().generation;
        let (ctl_progress, mut ctl_seen) = watch::channel(Progress::default());
        let (obs_progress, mut obs_seen) = watch::channel(Progress::default());
        let followers = [follow(controller, ctl_progress), follow(observer, obs_progress)];
        for seen in [&mut ctl_seen, &mut obs_seen] {
            reach(seen, "lines before the upgrade", |p| p.lines >= LINES).await;
        }

        owner.upgrade(Some(&program)).await.expect("the upgrade is answered ok");

        let after = client.ping().await.expect("ping after the upgrade");
        assert_eq!((after.pid, &after.instance_id), (before.pid, &before.instance_id), "the same daemon");
        for seen in [&mut ctl_seen, &mut obs_seen] {
            reach(seen, "resumed", |p| p.resumed >= 1).await;
            let from = seen.borrow().lines;
            reach(seen, "lines after the upgrade", |p| p.lines >= from + LINES).await;
        }
        // The same attachment id holds control: another controller is refused naming it, without a takeover.
        let other = client.subscribe(id, 0, "other", Role::Controller, Takeover::Refuse).await;
        assert!(
            matches!(&other, Err(ClientError::Daemon { message }) if message == "terminal already has controller ctl"),
            "{:?}",
            other.map(|s| s.attached().role)
        );
        // The printer stops, says `end`, and reads a line: the controller's `write` is taken, an observer's not.
        usr1(shell_pid);
        for seen in [&mut ctl_seen, &mut obs_seen] {
            reach(seen, "the printer's `end`", |p| p.ended).await;
        }
        let refused = client.write(id, Some("obs"), b"nope\r").await;
        assert!(
            matches!(&refused, Err(ClientError::Daemon { message }) if message.contains("not the terminal controller")),
            "an observer's write: {refused:?}"
        );
        client.write(id, Some("ctl"), b"hello\r").await.expect("the controller's write");

        let [controller, observer] = followers;
        let (controller, observer) = (controller.await.expect("controller"), observer.await.expect("observer"));
        let lines = numbered(&controller.bytes);
        assert_eq!(observer.bytes, controller.bytes, "both saw the same bytes");
        for (followed, role) in [(&controller, Role::Controller), (&observer, Role::Observer)] {
            let [(resumed, offset)] = followed.resumed.as_slice() else {
                panic!("one resumption each: {:?}", followed.resumed)
            };
            assert_eq!(resumed.offset, *offset, "output continues at the offset where it stopped");
            assert_eq!((resumed.role, resumed.generation), (role, generation), "{resumed:?}");
            assert_eq!((resumed.process.id, resumed.process.pid), (id, Some(shell_pid)));
            assert!(resumed.attempts >= 1, "{resumed:?}");
            assert!(
                *offset > 0 && *offset < (followed.bytes.len() - TAIL.len()) as u64,
                "{resumed:?} in {lines} lines"
            );
        }

        usr1(pipe_pid);
        let exited = wait.await.expect("the wait task").expect("the wait is answered across the upgrade");
        assert_eq!((exited.exit_code, exited.signal.as_deref()), (Some(9), None), "{exited:?}");

        owner.shutdown().await.expect("the owner still shuts the daemon down");
    })
    .await
    .expect("the test finishes in time");
    drop(daemon);
}

/// Reads `subscription` until an event `wanted` accepts, within [`WAIT`]; returns it.
async fn until(subscription: &mut Subscription, what: &str, mut wanted: impl FnMut(&Event) -> bool) -> Event {
    let read = async {
        loop {
            let event = subscription.next().await.expect("the subscription goes on").expect("an event");
            if wanted(&event) {
                return event;
            }
        }
    };
    tokio::time::timeout(WAIT, read).await.unwrap_or_else(|_| panic!("{what}: not within {WAIT:?}"))
}

/// Whether `event` is `input_changed` saying the terminal waits for `input`.
fn waits_for(event: &Event, input: &[InputWait]) -> bool {
    matches!(event, Event::Message(message)
        if matches!(&**message, Response::InputChanged { input: Some(now) } if input.contains(now)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_command_and_an_observers_events_go_on_across_an_upgrade() {
    let root = tempfile::tempdir().expect("tempdir");
    let home = tempfile::tempdir().expect("home");
    let copy_dir = tempfile::tempdir().expect("tempdir");
    let (daemon, client) = start(root.path());
    tokio::time::timeout(TEST_LIMIT, async {
        let mut owner = client.own(None).await.expect("own");
        let program = private_copy(copy_dir.path());
        let home = home.path().to_str().expect("UTF-8");
        let env = [("HOME", home), ("PATH", "/usr/local/bin:/usr/bin:/bin")];
        let params = CreatePty {
            env: env.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect(),
            shell_integration: Some(true),
            ..CreatePty::new("bash", home)
        };
        let id = client.create_pty(params).await.expect("create_pty").id;
        let events = [OptIn::Input, OptIn::Commands];
        let mut watcher = client.subscribe_with(id, 0, "watch", Role::Observer, Takeover::Refuse, &events).await;
        let watcher = watcher.as_mut().expect("subscribe");
        let input = watcher.attached().process.pty.as_ref().and_then(|pty| pty.input).flatten();
        if input != Some(InputWait::Prompt) {
            until(watcher, "the first prompt", |event| waits_for(event, &[InputWait::Prompt])).await;
        }
        let running = client.run(id, "read -s line; echo got-$line", Some(0)).await.expect("run");
        let CommandOutcome::Running(running) = running else { panic!("a zero timeout answers at once: {running:?}") };
        until(watcher, "the command reading", |event| waits_for(event, &[InputWait::Password, InputWait::Line])).await;
        let waiter = client.clone();
        let finished = tokio::spawn(async move { waiter.wait_command(id, running.command_id, None).await });

        owner.upgrade(Some(&program)).await.expect("the upgrade is answered ok");

        until(watcher, "the watcher resumed", |event| matches!(event, Event::Resumed(_))).await;
        // Nobody controls the terminal, so input needs no attachment.
        client.write(id, None, b"hello\r").await.expect("write");
        let outcome = finished.await.expect("the wait_command task").expect("wait_command across the upgrade");
        let CommandOutcome::Finished(done) = outcome else { panic!("the command ended: {outcome:?}") };
        assert_eq!((done.command_id, done.exit_code), (running.command_id, Some(0)));
        assert_eq!(done.text.as_deref(), Some("got-hello"));
        // The resumed watcher still carries the events it asked for.
        let ended = until(
            watcher,
            "command_finished",
            |event| matches!(event, Event::Message(message) if matches!(**message, Response::CommandFinished { .. })),
        )
        .await;
        let Event::Message(ended) = ended else { unreachable!("matched above") };
        assert!(matches!(*ended, Response::CommandFinished { command_id, .. } if command_id == running.command_id));
        owner.shutdown().await.expect("shutdown");
    })
    .await
    .expect("the test finishes in time");
    drop(daemon);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_crash_a_subscription_and_a_wait_end_at_once() {
    let root = tempfile::tempdir().expect("tempdir");
    let (mut daemon, client) = start(root.path());
    tokio::time::timeout(TEST_LIMIT, async {
        let _owner = client.own(None).await.expect("own");
        let (pipe, pipe_pid) = exits_on_usr1(&client, root.path()).await;
        let waiter = client.clone();
        let wait = tokio::spawn(async move { waiter.wait(pipe).await });
        let (id, shell_pid) = printer(&client).await;
        let children = [watch_exit(pipe_pid), watch_exit(shell_pid)];
        let mut live = client.subscribe(id, 0, "obs", Role::Observer, Takeover::Refuse).await.expect("obs");
        let (progress, mut seen) = watch::channel(Progress::default());
        // Reads until the end, which must be an error and no resumption.
        let reader = tokio::spawn(async move {
            let mut lines = 0u64;
            loop {
                match live.next().await {
                    Some(Ok(Event::Output { bytes, .. })) => {
                        lines += bytes.iter().filter(|b| **b == b'\n').count() as u64;
                        progress.send_replace(Progress { lines, ..Progress::default() });
                    }
                    Some(Ok(Event::Resumed(resumed))) => panic!("no daemon is left to resume: {resumed:?}"),
                    Some(Ok(Event::Message(_))) => {}
                    Some(Err(error)) => {
                        assert!(live.next().await.is_none(), "nothing after the error");
                        return (error, Instant::now());
                    }
                    None => panic!("an end without an error"),
                }
            }
        });
        reach(&mut seen, "output before the crash", |p| p.lines >= 10).await;

        daemon.kill();
        let killed = Instant::now();
        let (error, ended) = reader.await.expect("the reader");
        assert!(matches!(error, ClientError::Closed | ClientError::Io { .. }), "{error:?}");
        assert!(ended.duration_since(killed) < RESUME_WINDOW / 2, "at once, not after the resume window");
        let waited = wait.await.expect("the wait task");
        assert!(matches!(waited, Err(ClientError::Closed | ClientError::Io { .. })), "{waited:?}");
        assert!(killed.elapsed() < RESUME_WINDOW / 2, "the wait ended at once too");
        // The daemon's guardian ends its children (SPEC X4) before the runtime directory, with the record of
        // their groups, is removed.
        for child in children {
            exited(child).await;
        }
    })
    .await
    .expect("the test finishes in time");
}
