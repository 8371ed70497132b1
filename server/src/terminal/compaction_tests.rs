//! Tests of compressing a quiet terminal's memory (`actor/compact.rs`): a compressed terminal answers
//! `snapshot`, `read_rows`, `replay`, `subscribe` and `resize` byte for byte as an uncompressed twin fed the same output, and
//! the quiet delay is what it says: output or reads more often than it keep a terminal from being compressed,
//! and it compresses once they stop.

use std::time::{Duration, Instant};

use opencode_pty_protocol::Response;
use opencode_pty_testkit::screens::colourful_words;

use super::tests::sh;
use super::*;
use crate::process::Event;

/// The bound on every wait of these tests.
const WAIT: Duration = Duration::from_secs(60);

/// Reads a subscription's output until it contains `marker`.
fn output_until(subscription: &ProcessSubscription, marker: &str) {
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains(marker) {
        match subscription.recv_timeout(WAIT).expect("output before the timeout") {
            Event::Output(chunk) => {
                seen.extend_from_slice(chunk.bytes());
                // Keep only what a marker split across chunks needs.
                let keep = seen.len().saturating_sub(64);
                seen.drain(..keep);
            }
            Event::Message(_) => {}
        }
    }
}

/// Waits until the terminal has finished a compression pass beyond the first `passes` and nothing has touched
/// it since.
fn compressed(handle: &PtyHandle, passes: u64) -> actor::CompactionCounts {
    let deadline = Instant::now() + WAIT;
    loop {
        let counts = handle.compaction().expect("compaction counts");
        if counts.compressed && counts.passes > passes {
            return counts;
        }
        assert!(Instant::now() < deadline, "the terminal was not compressed in {WAIT:?}: {counts:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What of a `snapshot` depends on the screen alone (not on the process's id, pid or start).
fn screen_of(snapshot: Response) -> (String, String, u16, u16) {
    match snapshot {
        Response::Snapshot { text, checkpoint_base64, cursor_x, cursor_y, .. } => {
            (text, checkpoint_base64, cursor_x, cursor_y)
        }
        other => panic!("not a snapshot: {other:?}"),
    }
}

fn rows_of(rows: Response) -> (Vec<String>, u16, u16) {
    match rows {
        Response::Rows { lines, cursor_x, cursor_y, .. } => (lines, cursor_x, cursor_y),
        other => panic!("not rows: {other:?}"),
    }
}

/// The `resized` checkpoint a subscription receives.
fn resized_checkpoint(subscription: &ProcessSubscription) -> String {
    loop {
        match subscription.recv_timeout(WAIT).expect("an event before the timeout") {
            Event::Message(message) => {
                if let Response::Resized { checkpoint_base64, .. } = message.response() {
                    return checkpoint_base64.clone();
                }
            }
            Event::Output(_) => {}
        }
    }
}

/// A terminal compressed (`twin` none) answers every read as its uncompressed twin, each read made right after
/// a pass so that it finds the history compressed; again after more output, and across a resize.
#[test]
fn a_compressed_terminal_answers_as_its_uncompressed_twin() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("first"), colourful_words(12_000, 7)).unwrap();
    std::fs::write(dir.path().join("second"), colourful_words(3_000, 11)).unwrap();
    let script = format!(
        "cd '{}'; cat first; echo END-ONE; read line; cat second; echo END-TWO; exec sleep 600",
        dir.path().display()
    );
    let start = |after| {
        let config = TerminalConfig { compact_after: after, ..TerminalConfig::default() };
        PtyHandle::spawn(1, sh(&script), config).expect("spawn")
    };
    let (small, twin) = (start(Some(Duration::from_millis(100))), start(None));
    let subscribe = |handle: &PtyHandle| {
        handle.subscribe(0, "probe".into(), Role::Observer, ExistingController::Refuse).expect("subscribe")
    };
    let (small_events, twin_events) = (subscribe(&small), subscribe(&twin));
    output_until(&small_events, "END-ONE");
    output_until(&twin_events, "END-ONE");

    let mut passes = 0;
    let reads_match = |what: &str, passes: &mut u64| {
        *passes = compressed(&small, *passes).passes;
        assert_eq!(screen_of(small.snapshot().unwrap()), screen_of(twin.snapshot().unwrap()), "{what}: snapshot");
        for count in [None, Some(50), Some(5_000)] {
            *passes = compressed(&small, *passes).passes;
            assert_eq!(
                rows_of(small.read_rows(count).unwrap()),
                rows_of(twin.read_rows(count).unwrap()),
                "{what}: rows {count:?}"
            );
        }
        *passes = compressed(&small, *passes).passes;
        let (ours, theirs) = (small.replay(0).unwrap(), twin.replay(0).unwrap());
        assert_eq!((ours.available, ours.end, ours.truncated), (theirs.available, theirs.end, theirs.truncated));
        assert!(ours.bytes == theirs.bytes, "{what}: replay");
        // A subscription from the middle of the ring: its `attached` replay.
        let middle = ours.available + (ours.end - ours.available) / 2;
        let attach = |handle: &PtyHandle| {
            let subscription = handle
                .subscribe(middle, "middle".into(), Role::Observer, ExistingController::Refuse)
                .expect("subscribe");
            match subscription.recv_timeout(WAIT).expect("attached") {
                Event::Message(message) => match message.response() {
                    Response::Attached { available_offset, end_offset, replay_base64, truncated, .. } => {
                        (*available_offset, *end_offset, replay_base64.clone(), *truncated)
                    }
                    other => panic!("not attached: {other:?}"),
                },
                Event::Output(_) => panic!("output before attached"),
            }
        };
        assert!(attach(&small) == attach(&twin), "{what}: subscribe from {middle}");
    };
    reads_match("after the first output", &mut passes);

    // A replay reads the ring, not the emulator: the terminal is still compressed.
    let counts = small.compaction().unwrap();
    assert!(counts.compressed && counts.passes == passes, "{counts:?}");
    assert!(counts.emulator_steps > 10, "10,000 lines of history take many incremental steps: {counts:?}");
    let kept = small.info().output_tail - small.info().output_head;
    assert!(counts.ring_steps > 3 && (counts.ring_bytes as u64) < kept * 3 / 4, "the ring is compressed: {counts:?}");
    let twin_counts = twin.compaction().unwrap();
    assert_eq!(actor::CompactionCounts { thread: 0, ..twin_counts }, Default::default(), "the twin compresses nothing");
    // The pass's end gave the actor's stack below its frame back (the reads above ran on it after, and matched).
    assert!(counts.stack_released > 64 * 1024, "the actor's stack below its frame was given back: {counts:?}");

    // A resize of a compressed terminal: its `resized` checkpoint and every read after it.
    passes = counts.passes;
    for handle in [&small, &twin] {
        handle.resize(None, 57, 19).expect("resize");
    }
    assert_eq!(resized_checkpoint(&small_events), resized_checkpoint(&twin_events), "resized to 57x19");
    reads_match("after a resize", &mut passes);

    // More output into compressed history, then compressed again.
    for handle in [&small, &twin] {
        handle.write(None, b"go\r".to_vec()).expect("input");
    }
    output_until(&small_events, "END-TWO");
    output_until(&twin_events, "END-TWO");
    reads_match("after more output", &mut passes);

    for handle in [&small, &twin] {
        handle.resize(None, 80, 24).expect("resize");
    }
    assert_eq!(resized_checkpoint(&small_events), resized_checkpoint(&twin_events), "back to 80x24");
    reads_match("back at 80x24", &mut passes);
    small.terminate();
    twin.terminate();
}

/// Output more often than the quiet delay keeps a terminal from being compressed; once it stops, the terminal
/// is compressed.
#[test]
fn output_within_the_quiet_delay_puts_compression_off() {
    let script = "i=0; while [ $i -lt 40 ]; do echo tick $i; sleep 0.05; i=$((i+1)); done; echo DONE; exec sleep 600";
    let config = TerminalConfig { compact_after: Some(Duration::from_millis(1_500)), ..TerminalConfig::default() };
    let handle = PtyHandle::spawn(1, sh(script), config).expect("spawn");
    let events = handle.subscribe(0, "probe".into(), Role::Observer, ExistingController::Refuse).expect("subscribe");
    output_until(&events, "DONE");
    // Two seconds of output every 50 ms: longer than the delay, never quiet for it.
    assert_eq!(handle.compaction().unwrap().emulator_steps, 0, "compressed while it printed");
    let counts = compressed(&handle, 0);
    assert!(counts.emulator_steps >= 1, "{counts:?}");
    handle.terminate();
}

/// Reads of the screen more often than the quiet delay keep a terminal from being compressed (they restore what
/// they touch, which the library's activity token does not show); once they stop, the terminal is compressed.
#[test]
fn reads_within_the_quiet_delay_put_compression_off() {
    let config = TerminalConfig { compact_after: Some(Duration::from_millis(1_500)), ..TerminalConfig::default() };
    let handle = PtyHandle::spawn(1, sh("seq 1 3000; echo DONE; exec sleep 600"), config).expect("spawn");
    let events = handle.subscribe(0, "probe".into(), Role::Observer, ExistingController::Refuse).expect("subscribe");
    output_until(&events, "DONE");
    let reading = Instant::now();
    while reading.elapsed() < Duration::from_secs(3) {
        handle.snapshot().expect("snapshot");
        // The pace of the reads (the workload), not a wait for anything.
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(handle.compaction().unwrap().emulator_steps, 0, "compressed while it was read");
    let counts = compressed(&handle, 0);
    assert!(counts.emulator_steps >= 1, "{counts:?}");
    handle.terminate();
}

/// A terminal whose output is held back (its controller reads nothing, so the child blocks on a full PTY) is
/// not quiet, however long nothing new is processed: it is not compressed meanwhile.
#[test]
fn output_held_back_by_a_stalled_controller_is_not_quiet() {
    let config = TerminalConfig { compact_after: Some(Duration::from_millis(300)), ..TerminalConfig::default() };
    let handle = PtyHandle::spawn(1, sh("while :; do seq 1 1000; done"), config).expect("spawn");
    // The controller's channel is never read: the terminal falls behind it, then holds its output back.
    let _controller =
        handle.subscribe(0, "stalled".into(), Role::Controller, ExistingController::Refuse).expect("subscribe");
    let deadline = Instant::now() + WAIT;
    let mut last = handle.info().output_tail;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let tail = handle.info().output_tail;
        if tail == last && tail > 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the output never stopped for the stalled controller");
        last = tail;
    }
    // Five quiet delays without a processed byte: still nothing compressed.
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(handle.info().output_tail, last, "the output stayed held back");
    assert_eq!(handle.compaction().unwrap().emulator_steps, 0, "compressed while its output was held back");
    handle.terminate();
}

/// How many pages of thread `tid`'s stack are resident below where it waits: from its stack pointer (its
/// `syscall` file, read while it is blocked) down to the bottom of the mapping that holds it, by the present
/// bits of `/proc/self/pagemap`. `None` while the thread is not blocked in a system call.
fn resident_below_wait(tid: i32) -> Option<usize> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let syscall = std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall")).ok()?;
    let fields: Vec<&str> = syscall.split_whitespace().collect();
    // "NR arg1 .. arg6 SP PC" while blocked; "running" (or "-1 SP PC" between calls) otherwise.
    if fields.len() != 9 {
        return None;
    }
    let sp = usize::from_str_radix(fields[7].trim_start_matches("0x"), 16).ok()?;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let low = maps.lines().find_map(|line| {
        let (low, high) = line.split_whitespace().next()?.split_once('-')?;
        let (low, high) = (usize::from_str_radix(low, 16).ok()?, usize::from_str_radix(high, 16).ok()?);
        (low..high).contains(&sp).then_some(low)
    })?;
    let mut pagemap = std::fs::File::open("/proc/self/pagemap").unwrap();
    let (first, last) = (low / 4096, sp / 4096);
    let mut entries = vec![0u8; (last - first) * 8];
    pagemap.seek(SeekFrom::Start(first as u64 * 8)).unwrap();
    pagemap.read_exact(&mut entries).unwrap();
    Some(entries.chunks(8).filter(|entry| entry[7] & 0x80 != 0).count())
}

/// A compression pass ends with the actor giving back the stack pages below its wait (the parser's 16 KiB
/// buffer among them): once quiet, a terminal that printed a colourful history keeps none of them, where its
/// twin that never compresses keeps them all.
#[test]
fn a_pass_gives_the_stack_below_the_actor_s_wait_back() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lines"), colourful_words(3_000, 5)).unwrap();
    // It prints once told to, so that its subscription (which reads output events, not `attached`'s replay)
    // sees every byte as an event.
    let script = format!("read go; cat '{}'; echo END; exec sleep 600", dir.path().join("lines").display());
    let start = |after| {
        let config = TerminalConfig { compact_after: after, ..TerminalConfig::default() };
        PtyHandle::spawn(1, sh(&script), config).expect("spawn")
    };
    let (small, twin) = (start(Some(Duration::from_millis(100))), start(None));
    for handle in [&small, &twin] {
        let events = handle.subscribe(0, "probe".into(), Role::Observer, ExistingController::Refuse).unwrap();
        handle.write(None, b"go\n".to_vec()).expect("input");
        output_until(&events, "END");
    }
    let counts = compressed(&small, 0);
    assert!(counts.stack_released > 64 * 1024, "{counts:?}");
    let below = |handle: &PtyHandle| {
        let thread = handle.compaction().unwrap().thread;
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(pages) = resident_below_wait(thread) {
                return pages;
            }
            assert!(Instant::now() < deadline, "the actor never blocked");
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    // The answer to `compaction` itself ran below the wait (a page at most) after the pass gave the rest back.
    let (kept, twin_kept) = (below(&small), below(&twin));
    assert!(kept <= 1, "the compressed terminal's actor keeps {kept} pages below its wait");
    assert!(twin_kept >= 4, "the parser's buffer stays below the twin's wait: {twin_kept} pages");
    small.terminate();
    twin.terminate();
}
