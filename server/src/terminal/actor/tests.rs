//! The actor on its own, fed through its channels as its threads would feed it: how the end of the output,
//! the reader's failures and the child's exit show in the lifecycle, in either order.

use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::bounded;
use opencode_pty_protocol::Lifecycle;

use super::*;
use crate::process::Child;
use crate::process::delivery::{self, Recipient};
use crate::terminal::command::Reply;
use crate::terminal::turns::FREE_OUTPUT_BURST_BYTES;

/// The longest any step of these tests waits.
const BOUND: Duration = Duration::from_secs(30);

/// An actor over a real PTY (whose child only waits), with the reader's channel in the test's hands. Dropping
/// it stops the actor and kills the child.
struct Harness {
    commands: Sender<Command>,
    output: Option<Sender<ReaderOutput>>,
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
    child: Child,
    /// What the actor hands the writer thread (none runs: the test takes it, and says what it holds).
    writer: Recipient<Vec<u8>>,
}

/// The parts of an actor over a real PTY whose child only waits, and that child.
/// The writer's side of the input's delivery is returned too.
fn parts(commands: Sender<Command>, stop: Receiver<()>, turns: Turns) -> (ActorParts, Child, Recipient<Vec<u8>>) {
    let spec = crate::terminal::tests::sh("read never");
    let spawned = crate::terminal::spawn::spawn(&spec, &[], None).expect("spawn");
    let last_info = Arc::new(Mutex::new(super::initial_info(1, spawned.pid, 0, &spec)));
    let child = Child::new(spawned.pid);
    let master = Arc::new(PtyMaster::new(spawned.master));
    let (input, writer) = delivery::channel(8, 0);
    writer.offer(master.clone());
    let parts = ActorParts {
        id: 1,
        spec,
        pid: spawned.pid,
        started_at: 0,
        master,
        tty: spawned.tty,
        replay_bytes: 1024,
        scrollback_lines: 100,
        compact_after: None,
        commands,
        input,
        stop,
        last_info,
        turns,
        shell_nonce: None,
        reader_holds: crate::terminal::io::ReaderHolds::default(),
        capture: crossbeam_channel::never(),
        restored: None,
        writer: None,
    };
    (parts, child, writer)
}

impl Harness {
    fn start() -> Harness {
        Harness::start_with(Turns::new(1))
    }

    /// An actor that takes its turns at output processing from `turns`.
    fn start_with(turns: Turns) -> Harness {
        let (commands, commands_rx) = bounded(8);
        let (output, output_rx) = bounded(8);
        let (stop, stop_rx) = bounded(0);
        let (parts, child, writer) = parts(commands.clone(), stop_rx, turns);
        // The child's end is sent as a command by these tests; the wait thread's channel stays empty.
        let (_exit, exit_rx) = bounded(1);
        let thread = std::thread::spawn(move || run(Box::new(parts), commands_rx, output_rx, exit_rx));
        let output = Some(output);
        Harness { commands, output, stop: Some(stop), thread: Some(thread), child, writer }
    }

    fn send(&self, command: Command) {
        self.commands.send_timeout(command, BOUND).expect("the actor takes commands");
    }

    fn reader(&self, message: ReaderOutput) {
        self.output.as_ref().expect("the reader's channel").send_timeout(message, BOUND).expect("taken");
    }

    /// The screen's text, as `snapshot` answers it.
    fn screen(&self) -> String {
        let (reply, answer) = bounded(1);
        self.send(Command::Snapshot { opt_ins: OptIns::NONE, reply: Reply::new(reply, Instant::now() + BOUND) });
        match answer.recv_timeout(BOUND).expect("an answer").expect("a snapshot") {
            Response::Snapshot { text, .. } => text,
            other => panic!("not a snapshot: {other:?}"),
        }
    }

    /// Waits (bounded) until the actor has taken everything sent on the reader's channel.
    fn taken(&self) {
        let deadline = Instant::now() + BOUND;
        while !self.output.as_ref().expect("the reader's channel").is_empty() {
            assert!(Instant::now() < deadline, "the actor does not take output");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn lifecycle(&self) -> Lifecycle {
        let (reply, answer) = bounded(1);
        self.send(Command::Info { opt_ins: OptIns::NONE, reply: Reply::new(reply, Instant::now() + BOUND) });
        answer.recv_timeout(BOUND).expect("an answer").expect("info").lifecycle
    }

    /// The lifecycle once it is `wanted`, polled (bounded): the reader's channel and the command queue are two
    /// channels, so a command sent after a reader message may be taken first.
    fn eventually(&self, wanted: Lifecycle) {
        let deadline = Instant::now() + BOUND;
        loop {
            let lifecycle = self.lifecycle();
            if lifecycle == wanted {
                return;
            }
            assert!(Instant::now() < deadline, "still {lifecycle:?}, wanted {wanted:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            crate::process::thread::join_reporting(thread);
        }
        self.child.kill_and_reap();
    }
}

/// Sends `data` as input (no controller, so any connection may write) and waits for the answer.
fn write(harness: &Harness, data: &[u8]) {
    let (reply, answer) = bounded(1);
    let reply = Reply::new(reply, Instant::now() + BOUND);
    harness.send(Command::Write { attachment: None, data: data.to_vec(), reply });
    answer.recv_timeout(BOUND).expect("an answer").expect("written");
}

#[test]
fn input_goes_straight_to_the_pty_while_the_writer_holds_nothing_and_behind_it_otherwise() {
    let harness = Harness::start();
    // The writer holds nothing: the PTY takes a few bytes at once, from the actor itself.
    write(&harness, b"typed\n");
    assert!(harness.writer.receiver().try_recv().is_err(), "nothing was handed to the writer");
    // The writer holds a chunk: later input must queue behind it, never overtake it.
    harness.writer.pretend_in_flight();
    write(&harness, b"later\n");
    assert_eq!(harness.writer.receiver().recv_timeout(BOUND).expect("handed to the writer"), b"later\n");
}

fn exit(code: u32) -> Command {
    Command::ChildExited(ExitStatus { exit_code: Some(code), signal: None })
}

#[test]
fn the_exit_waits_for_the_end_of_the_output_and_a_later_failure_keeps_it() {
    let actor = Harness::start();
    actor.send(exit(7));
    assert_eq!(actor.lifecycle(), Lifecycle::Running, "the output has not ended yet");
    actor.reader(ReaderOutput::End);
    actor.eventually(Lifecycle::Exited { exit_code: Some(7), signal: None });
    actor.send(Command::WriterFailed("broken pipe".into()));
    assert_eq!(actor.lifecycle(), Lifecycle::Exited { exit_code: Some(7), signal: None });
}

#[test]
fn a_reader_failure_is_reported_over_the_exit() {
    let actor = Harness::start();
    actor.reader(ReaderOutput::Failed("input/output error".into()));
    let failed = Lifecycle::Failed { message: "input/output error".into() };
    actor.eventually(failed.clone());
    actor.send(exit(0));
    assert_eq!(actor.lifecycle(), failed, "the failure came first");
}

#[test]
fn a_reader_that_stops_without_a_word_has_failed() {
    let mut actor = Harness::start();
    drop(actor.output.take());
    actor.eventually(Lifecycle::Failed { message: "the PTY reader stopped unexpectedly".into() });
}

#[test]
fn a_wait_failure_ends_the_child_as_a_failure() {
    let actor = Harness::start();
    actor.reader(ReaderOutput::End);
    actor.send(Command::WaitFailed("waiting for the child failed: ECHILD".into()));
    actor.eventually(Lifecycle::Failed { message: "waiting for the child failed: ECHILD".into() });
}

/// A precise deadline (the batch answering client input) is never met early, however the wait and the polling
/// after it split the time, and an operation that is ready is taken rather than the deadline awaited.
#[test]
fn a_precise_wait_ends_at_its_deadline_not_before_and_takes_what_is_ready() {
    let (sender, receiver) = bounded::<u8>(1);
    for precise in [false, true] {
        let deadline_at = |at| if precise { Deadline::Exact(at) } else { Deadline::At(at) };
        let steps = [Duration::ZERO, PRECISE_WAKE_MARGIN / 2, PRECISE_WAKE_MARGIN * 2, Duration::from_millis(1)];
        for after in steps {
            let deadline = Instant::now() + after;
            let mut waits = Waits::new();
            waits.recv(&receiver, Wake::Output);
            assert!(waits.select(deadline_at(deadline)).is_none(), "nothing arrived");
            assert!(Instant::now() >= deadline, "precise {precise}: the wait ended before its deadline");
        }
        for after in [PRECISE_WAKE_MARGIN / 2, BOUND] {
            sender.send(7).expect("send");
            let mut waits = Waits::new();
            waits.recv(&receiver, Wake::Output);
            let (wake, operation) = waits.select(deadline_at(Instant::now() + after)).expect("the message");
            assert_eq!(wake, Wake::Output);
            assert_eq!(operation.recv(&receiver), Ok(7));
        }
    }
}

#[test]
fn an_end_seen_while_being_terminated_is_not_published_as_exited() {
    // The actor's one wait can find the stop beside the child's end and the end of its output (the kill that
    // follows the stop); whichever it takes first, the kill's exit is never published.
    for terminated in [false, true] {
        let (commands, _commands_rx) = bounded(8);
        let (stop, stop_rx) = bounded::<()>(0);
        let (parts, child, _writer) = parts(commands, stop_rx, Turns::new(1));
        let vt = Terminal::new(80, 24, 100).expect("terminal");
        let mut actor = Actor::new(parts, vt, bounded(1).1);
        if terminated {
            drop(stop);
        }
        actor.command(exit(0));
        actor.reader_output(Ok(ReaderOutput::End), Lag::CaughtUp);
        assert_eq!(actor.life.published().is_some(), !terminated, "terminated: {terminated}");
        child.kill_and_reap();
    }
}

/// Takes the only turn of `turns`.
fn the_only_turn(turns: &Turns) -> Turn {
    turns.waiting().recv_timeout(BOUND).map(|()| turns.taken()).expect("the turn")
}

#[test]
fn output_waits_for_a_turn_while_requests_are_answered() {
    let turns = Turns::new(1);
    let held = the_only_turn(&turns);
    let actor = Harness::start_with(turns.clone());
    // More than a quiet terminal may process without a turn (carriage returns, which show nothing).
    let mut chunk = vec![b'\r'; FREE_OUTPUT_BURST_BYTES];
    chunk.extend_from_slice(b"turn-marker");
    actor.reader(ReaderOutput::Chunk(chunk, Instant::now()));
    actor.taken();
    // Without a turn the chunk is held: the request is answered, from the screen as it was.
    assert!(!actor.screen().contains("turn-marker"), "output processed without a turn");
    drop(held);
    let deadline = Instant::now() + BOUND;
    while !actor.screen().contains("turn-marker") {
        assert!(Instant::now() < deadline, "the turn given back was never taken");
        std::thread::sleep(Duration::from_millis(1));
    }
    // Caught up with its reader, the actor gave the turn back before it took the request.
    assert_eq!(turns.free(), 1, "the turn is back");
}

#[test]
fn a_quiet_terminal_processes_a_little_output_without_a_turn() {
    let turns = Turns::new(1);
    let _held = the_only_turn(&turns);
    let actor = Harness::start_with(turns);
    actor.reader(ReaderOutput::Chunk(b"echoed".to_vec(), Instant::now()));
    actor.taken();
    assert!(actor.screen().contains("echoed"), "a keystroke's echo waited for a turn");
}

#[test]
fn an_actor_waiting_for_a_turn_still_stops() {
    let turns = Turns::new(1);
    let _held = the_only_turn(&turns);
    let actor = Harness::start_with(turns);
    actor.reader(ReaderOutput::Chunk(vec![b'x'; FREE_OUTPUT_BURST_BYTES + 1], Instant::now()));
    actor.taken();
    // Dropping the harness closes the stop channel and joins the actor (the test's timeout bounds it).
    drop(actor);
}
