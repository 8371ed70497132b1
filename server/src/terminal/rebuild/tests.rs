//! The emulator of a restored terminal, rebuilt off its actor: from a snapshot taken before the ring's tail (the
//! bytes since fed without being answered again), from the ring alone, and while the terminal already serves
//! its output, after which it catches up with what was read meanwhile (its title told then, once).

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use opencode_pty_protocol::{Response, Role};

use super::*;
use crate::process::{Event, ExistingController, ProcessSubscription};
use crate::terminal::tests::sh;
use crate::terminal::{PtyHandle, TerminalConfig};
use crate::upgrade::{ReplayState, TerminalState};

/// The longest any step waits.
const WAIT: Duration = Duration::from_secs(60);

/// The job of a terminal whose snapshot was taken at `at` and whose ring holds `ring` from offset 0.
fn job(snapshot: Vec<u8>, at: u64, ring: &[u8]) -> (Job, Receiver<Option<Detached>>) {
    let (done, ready) = bounded(1);
    let job = Job {
        id: 1,
        has_snapshot: !snapshot.is_empty(),
        source: Arc::new(ScreenBytes::Inline { snapshot, ring: ring.to_vec() }),
        head: 0,
        snapshot_at: at,
        tail: ring.len() as u64,
        cols: 40,
        rows: 10,
        scrollback_lines: 100,
        done,
    };
    (job, ready)
}

#[test]
fn the_ring_after_the_snapshot_is_fed_unanswered_and_without_one_the_whole_ring_is() {
    let before = b"one\r\n\x1b]2;first\x07two\r\n".to_vec();
    let after = b"\x1b[c\x1b]2;second\x07three\x1b[1mbold".to_vec();
    let ring = [before.clone(), after].concat();
    let mut reference = Terminal::new(40, 10, 100).expect("terminal");
    let mut at_snapshot = Terminal::new(40, 10, 100).expect("terminal");
    at_snapshot.write(&before);
    let snapshot = at_snapshot.snapshot().expect("snapshot");
    reference.write(&ring);
    let cases = [
        ("a snapshot before the tail", snapshot, before.len() as u64),
        ("no snapshot", Vec::new(), 0),
        ("a snapshot that does not read", b"not a snapshot".to_vec(), before.len() as u64),
    ];
    for (case, snapshot, at) in cases {
        let (job, _ready) = job(snapshot, at, &ring);
        let mut vt = job.build().expect("an emulator");
        assert_eq!(vt.plain_text().unwrap(), reference.plain_text().unwrap(), "{case}");
        assert_eq!(vt.title().as_deref(), Some("second"), "{case}");
        assert_eq!(vt.cursor(), reference.cursor(), "{case}");
        // What the predecessor answered is not answered again, nor its title told again.
        assert!(vt.take_replies().is_empty(), "{case}");
        assert!(!vt.take_title_changed(), "{case}");
    }
}

/// A subscriber's stream and the events beside it.
#[derive(Default)]
struct Seen {
    bytes: Vec<u8>,
    titles: Vec<String>,
}

impl Seen {
    /// Takes events until `until` holds.
    fn until(&mut self, subscription: &ProcessSubscription, until: impl Fn(&Seen) -> bool) {
        let deadline = Instant::now() + WAIT;
        while !until(self) {
            let left = deadline.saturating_duration_since(Instant::now());
            match subscription.recv_timeout(left).expect("an event in time") {
                Event::Output(output) => {
                    assert_eq!(output.start(), self.bytes.len() as u64, "contiguous output");
                    self.bytes.extend_from_slice(output.bytes());
                }
                Event::Message(message) => match message.response() {
                    Response::TitleChanged { title } => self.titles.push(title.clone()),
                    Response::Attached { available_offset, replay_base64, .. } => {
                        assert_eq!(*available_offset, self.bytes.len() as u64, "the replay starts at the stream");
                        self.bytes.extend(BASE64.decode(replay_base64).expect("base64"));
                    }
                    _ => {}
                },
            }
        }
    }
}

fn wait_for(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A terminal captured as an upgrade does it (prepared first, then `between` done, then captured): its state
/// and the descriptors it names.
fn capture(handle: &PtyHandle, between: impl FnOnce()) -> (TerminalState, OwnedFd, Option<OwnedFd>) {
    let prepared = handle.prepare_capture().expect("the actor runs").recv_timeout(WAIT).expect("prepared");
    assert!(prepared > 0, "a screen file was written");
    between();
    let capturing = handle.begin_capture().expect("capture");
    let captured = handle.finish_capture(capturing).expect("captured");
    (captured.state, captured.master, captured.screen)
}

#[test]
fn a_restored_terminal_serves_before_its_emulator_is_rebuilt_which_then_catches_up_once() {
    let script = "printf 'one\\n'; read a; printf 'mid\\033]2;early\\007\\n'; read b; \
                  printf 'two\\033]2;later\\007\\n'; read c; exit 3";
    let handle = PtyHandle::spawn(1, sh(script), TerminalConfig::default()).expect("spawn");
    wait_for("the first line", || handle.info().output_tail >= 5);
    // Output after the snapshot was prepared: the successor feeds it to the emulator unanswered.
    let (state, master, screen) = capture(&handle, || {
        handle.write(None, b"\r".to_vec()).expect("typed");
        wait_for("the early title", || handle.info().pty.expect("pty").title == "early");
    });
    let tail = state.ring_tail();
    assert!(state.snapshot_at.expect("where") < tail, "the snapshot is older than the ring's tail");
    assert!(state.screen_file.is_some());
    drop(handle);
    // The rebuilder does not start yet: the restored terminal serves all the same.
    let mut rebuilder = Rebuilder::default();
    let restored =
        PtyHandle::restore(state, master, screen, TerminalConfig::default(), &mut rebuilder, None).expect("restored");
    let subscription = restored.subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse).expect("sub");
    let mut seen = Seen::default();
    seen.until(&subscription, |seen| seen.bytes.len() as u64 >= tail);
    restored.write(None, b"\r".to_vec()).expect("typed after the restore");
    seen.until(&subscription, |seen| seen.bytes.ends_with(b"two\x1b]2;later\x07\r\n"));
    assert!(seen.titles.is_empty(), "no title told again, none told before the emulator took its output");
    assert_eq!(restored.info().pty.expect("pty").title, "early", "the title the state carried");
    // The emulator comes, takes what was read meanwhile, and tells its title once.
    rebuilder.start();
    seen.until(&subscription, |seen| !seen.titles.is_empty());
    assert_eq!(seen.titles, ["later"]);
    let mut reference = Terminal::new(80, 24, 100).expect("terminal");
    reference.write(&seen.bytes);
    let Response::Snapshot { text, .. } = restored.snapshot().expect("snapshot") else { unreachable!() };
    assert_eq!(text, reference.plain_text().unwrap());
    restored.write(None, b"\r".to_vec()).expect("typed");
    restored.terminate();
}

#[test]
fn a_resize_after_the_screen_was_prepared_has_the_capture_make_it_again() {
    let handle =
        PtyHandle::spawn(1, sh("printf 'one\\ntwo\\n'; read a; exit 0"), TerminalConfig::default()).expect("spawn");
    wait_for("the output", || handle.info().output_tail >= 10);
    let (state, master, screen) = capture(&handle, || handle.resize(None, 30, 6).expect("resized"));
    assert_eq!(state.snapshot_at, Some(state.ring_tail()), "made again at the capture");
    assert_eq!((state.cols, state.rows), (30, 6));
    let ReplayState { head, .. } = state.replay;
    assert_eq!(head, 0);
    drop(handle);
    let mut rebuilder = Rebuilder::default();
    let restored =
        PtyHandle::restore(state, master, screen, TerminalConfig::default(), &mut rebuilder, None).expect("restored");
    rebuilder.start();
    let mut reference = Terminal::new(80, 24, 100).expect("terminal");
    reference.write(b"one\r\ntwo\r\n");
    reference.resize(30, 6).expect("resized");
    let Response::Snapshot { text, .. } = restored.snapshot().expect("snapshot") else { unreachable!() };
    assert_eq!(text, reference.plain_text().unwrap());
    restored.terminate();
}
