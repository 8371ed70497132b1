//! Controller and observers, resizes, and delivery: who may write, who gets promoted, and that backpressure
//! and slow subscribers never lose bytes or block shutdown.

use crate::support;

use std::time::{Duration, Instant};

use opencode_pty::limits::{
    CONTROLLER_BACKLOG_EVENTS, CONTROLLER_QUEUE_EVENTS, OBSERVER_BACKLOG_BYTES, OBSERVER_BACKLOG_EVENTS,
    OBSERVER_QUEUE_EVENTS,
};
use opencode_pty::{Event, ExistingController};
use opencode_pty_protocol::{Response, Role};
use support::{Seen, is_output, log_until, read_until, service, sh};

fn changed_to(attachment: Option<&'static str>) -> impl Fn(&Seen) -> bool {
    move |s: &Seen| {
        s.messages.iter().any(|m| matches!(m, Response::ControllerChanged { attachment_id, .. } if attachment_id.as_deref() == attachment))
    }
}

#[test]
fn one_controller_takeover_demotes_and_detach_promotes_the_former() {
    let service = service();
    let info = service.create_pty(sh("sleep 30")).expect("create");
    let handle = service.pty(info.id).unwrap();
    // An observer that never controlled is never promoted over a former controller.
    let _observer = handle.subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse).unwrap();
    let a = handle.subscribe(0, "a".into(), Role::Controller, ExistingController::Refuse).unwrap();
    let mut seen_a = Seen::default();
    read_until(&a, &mut seen_a, changed_to(Some("a")));
    let refused = handle.subscribe(0, "b".into(), Role::Controller, ExistingController::Refuse).unwrap_err();
    assert_eq!(refused.to_string(), "terminal already has controller a");
    // Only the controller's attachment may write; a null one only while there is no controller.
    assert_eq!(
        handle.write(None, b"x".to_vec()).unwrap_err().to_string(),
        "terminal input requires the active controller attachment"
    );
    handle.write(Some("a".into()), b"".to_vec()).unwrap();
    let b = handle.subscribe(0, "b".into(), Role::Controller, ExistingController::Replace).unwrap();
    read_until(&a, &mut seen_a, changed_to(Some("b")));
    assert_eq!(
        handle.write(Some("a".into()), b"x".to_vec()).unwrap_err().to_string(),
        "attachment a is not the terminal controller"
    );
    let wrong = handle.resize(Some("a".into()), 90, 20).unwrap_err();
    assert_eq!(wrong.to_string(), "attachment a is not the terminal controller");
    let anonymous = handle.resize(None, 90, 20).unwrap_err();
    assert_eq!(anonymous.to_string(), "terminal input requires the active controller attachment");
    // The controller may resize; `resized` carries the controller generation (2: a, then b).
    handle.resize(Some("b".into()), 90, 20).unwrap();
    read_until(&a, &mut seen_a, |s| s.messages.iter().any(|m| matches!(m, Response::Resized { generation: 2, .. })));
    // The demoted controller stays subscribed; when the new one leaves, the most recent former one returns.
    drop(b);
    read_until(&a, &mut seen_a, |s| {
        s.messages
            .iter()
            .filter(|m| matches!(m, Response::ControllerChanged { attachment_id: Some(x), .. } if x == "a"))
            .count()
            == 2
    });
    let generations: Vec<u64> = seen_a
        .messages
        .iter()
        .filter_map(|m| match m {
            Response::ControllerChanged { generation, .. } => Some(*generation),
            _ => None,
        })
        .collect();
    assert!(generations.windows(2).all(|w| w[0] < w[1]), "{generations:?}");
}

#[test]
fn control_promotes_and_resizes_before_the_input_arrives() {
    let service = service();
    // The child turns on in-band size reports, then echoes what it reads, byte by byte, as octal.
    let script = "stty raw -echo; printf '\\033[?2048hready'; dd bs=1 count=40 2>/dev/null | od -An -c; sleep 30";
    let info = service.create_pty(sh(script)).expect("create");
    let handle = service.pty(info.id).unwrap();
    let observer = handle.subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse).unwrap();
    let mut seen = Seen::default();
    read_until(&observer, &mut seen, |s| s.text().contains("ready"));
    assert_eq!(handle.control("nobody".into(), 80, 24).unwrap_err().to_string(), "attachment nobody is not subscribed");
    handle.input("o".into(), 100, 30, b"typed".to_vec()).unwrap();
    read_until(&observer, &mut seen, |s| s.messages.iter().any(|m| matches!(m, Response::Resized { .. })));
    // Fill the child's read of 40 bytes: the report (ESC[48;30;100;0;0t, 17 bytes) + "typed" + 18 more.
    handle.write(Some("o".into()), vec![b'.'; 18]).unwrap();
    read_until(&observer, &mut seen, |s| s.text().contains(".   .   ."));
    let text = seen.text();
    let report = text.find("033   [   4   8   ;   3   0   ;   1   0   0   ;   0   ;   0   t").expect("one size report");
    let typed = text.find("t   y   p   e   d").expect("the typed bytes");
    assert!(report < typed, "the size report reaches the child before the input: {text}");
    assert_eq!(text.matches("4   8   ;").count(), 1, "exactly one report per resize");
    let Some(Response::Resized { cols, rows, checkpoint_base64, .. }) =
        seen.messages.iter().find(|m| matches!(m, Response::Resized { .. }))
    else {
        unreachable!()
    };
    assert_eq!((cols.get(), rows.get()), (100, 30));
    assert!(!checkpoint_base64.is_empty());
}

#[test]
fn a_subscriber_mid_stream_sees_every_byte_exactly_once() {
    let service = service();
    let info = service
        .create_pty(sh("stty raw -echo; i=0; while [ $i -lt 3000 ]; do printf '%05d\\n' $i; i=$((i+1)); done"))
        .expect("create");
    let handle = service.pty(info.id).unwrap();
    let first = handle.subscribe(0, "first".into(), Role::Observer, ExistingController::Refuse).unwrap();
    read_until(&first, &mut Seen::default(), |s| s.text().contains("00100"));
    // Attach while the child is still writing; the replay and the live events must join without gap or overlap.
    let late = handle.subscribe(0, "late".into(), Role::Observer, ExistingController::Refuse).unwrap();
    let mut seen = Seen::default();
    read_until(&late, &mut seen, |s| s.exited().is_some());
    let expected: String = (0..3000).map(|i| format!("{i:05}\n")).collect();
    assert_eq!(seen.text(), expected);
}

#[test]
fn a_burst_reaches_a_healthy_observer_intact_and_an_idle_one_keeps_all_of_it() {
    let service = service();
    let info = service
        .create_pty(sh("stty raw -echo; read go; head -c 1048576 /dev/zero | tr '\\0' a; read again"))
        .expect("create");
    let handle = service.pty(info.id).unwrap();
    let healthy = handle.subscribe(0, "healthy".into(), Role::Observer, ExistingController::Refuse).unwrap();
    // Nobody reads this one until the burst is over.
    let idle = handle.subscribe(0, "idle".into(), Role::Observer, ExistingController::Refuse).unwrap();
    handle.write(None, b"\n".to_vec()).unwrap();
    let mut seen = Seen::default();
    read_until(&healthy, &mut seen, |s| s.output.iter().filter(|&&b| b == b'a').count() == 1_048_576);
    let mut idle_bytes = 0;
    while let Ok(event) = idle.recv_timeout(Duration::from_millis(100)) {
        if let Event::Output(chunk) = event {
            idle_bytes += chunk.bytes().iter().filter(|&&b| b == b'a').count();
        }
    }
    assert_eq!(idle_bytes, 1_048_576, "a 1 MiB burst fits an observer's queue ({OBSERVER_QUEUE_EVENTS} events)");
    drop((healthy, idle));
    handle.terminate();
}

#[test]
fn an_observer_that_never_reads_is_disconnected() {
    let service = service();
    let info =
        service.create_pty(sh("stty raw -echo; head -c 50000000 /dev/zero | tr '\\0' b; sleep 30")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let stuck = handle.subscribe(0, "stuck".into(), Role::Observer, ExistingController::Refuse).unwrap();
    // Without reading, wait until the terminal has produced far more than the observer may be held: by then it
    // must have been dropped, or the terminal waited for it.
    let most = (OBSERVER_QUEUE_EVENTS * 8192 + OBSERVER_BACKLOG_BYTES + 8192) as u64;
    support::eventually("the output to pass the stuck observer", || {
        (service.get(info.id).unwrap().output_tail > 3 * most).then_some(())
    });
    // Draining what it was sent ends in Disconnected, after at most the channel's and the backlog's worth.
    let mut received = 0u64;
    loop {
        match stuck.recv_timeout(support::WAIT) {
            Ok(Event::Output(chunk)) => received += chunk.bytes().len() as u64,
            Ok(Event::Message(_)) => {}
            Err(error) => {
                assert_eq!(error, crossbeam_channel::RecvTimeoutError::Disconnected, "dropped, not stalled");
                break;
            }
        }
        assert!(received <= most, "an observer that never reads is held no more than its bounds");
    }
    assert!(received > (OBSERVER_QUEUE_EVENTS as u64), "it got what its queue held before it was dropped");
}

#[test]
fn a_controller_that_stops_reading_holds_back_output_but_not_requests_or_terminate() {
    let service = service();
    let info = service.create_pty(sh("stty raw -echo; cat /dev/zero")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let controller = handle.subscribe(0, "c".into(), Role::Controller, ExistingController::Refuse).unwrap();
    // The controller never reads: its queue fills, output is held back, the reader waits, the child waits.
    support::eventually("the controller queue to fill", || {
        (controller.receiver().len() >= opencode_pty::limits::CONTROLLER_QUEUE_EVENTS).then_some(())
    });
    let held = service.get(info.id).expect("get").output_tail;
    // Requests are still answered in full while the controller is behind, takeover included.
    handle.rename(Some("still here".into())).expect("rename answers");
    assert!(matches!(handle.snapshot().expect("snapshot answers"), Response::Snapshot { .. }));
    let observer =
        handle.subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse).expect("an observer can attach");
    // Backpressure: the output tail moved at most by what the reader had queued when the controller filled up.
    let limit = (opencode_pty::limits::OUTPUT_QUEUE_CHUNKS as u64 + 2) * 8192;
    assert!(service.get(info.id).unwrap().output_tail <= held + limit, "output went on past a full controller");
    let taker =
        handle.subscribe(0, "t".into(), Role::Controller, ExistingController::Replace).expect("takeover answers");
    drop((observer, taker));
    let started = Instant::now();
    service.terminate(info.id).unwrap();
    assert!(started.elapsed() < support::WAIT);
    // The demoted controller was never dropped while it was the controller: its queue holds everything.
    assert!(controller.receiver().len() >= opencode_pty::limits::CONTROLLER_QUEUE_EVENTS);
}

#[test]
fn a_full_writer_queue_never_blocks_terminate() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let service = service();
    // The child never reads its input, so the PTY's input buffer, then the writer queue, fill up.
    let info = service.create_pty(sh("stty raw -echo; sleep 30")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (handle, accepted) = (handle.clone(), accepted.clone());
        std::thread::spawn(move || {
            for _ in 0..opencode_pty::limits::WRITER_QUEUE_CHUNKS * 2 {
                if handle.write(None, vec![b'z'; 4096]).is_err() {
                    return;
                }
                accepted.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    support::eventually("the writer queue to fill", || {
        (accepted.load(Ordering::Relaxed) >= opencode_pty::limits::WRITER_QUEUE_CHUNKS).then_some(())
    });
    let started = Instant::now();
    service.terminate(info.id).unwrap();
    assert!(started.elapsed() < support::WAIT, "terminate waited on the full writer queue");
    // A write still waiting for its answer ends when the terminal stops, not after the request timeout.
    writer.join().unwrap();
    assert!(started.elapsed() < opencode_pty::limits::REQUEST_TIMEOUT / 2, "a pending request outlived the terminal");
}

#[test]
fn a_child_flooding_queries_without_reading_never_stalls_its_terminal() {
    let service = service();
    // Every query makes a reply the child never reads: the replies pile up, but the actor keeps answering.
    let info = service.create_pty(sh("stty raw -echo; while :; do printf '\\033[6n\\033[c'; done")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let observer = handle.subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse).unwrap();
    let mut seen = Seen::default();
    read_until(&observer, &mut seen, |s| s.output.len() > 2 * 1024 * 1024);
    let started = Instant::now();
    let read = handle.replay(0).expect("the actor still answers requests");
    assert!(read.end > 2 * 1024 * 1024);
    assert!(started.elapsed() < opencode_pty::limits::REQUEST_TIMEOUT / 2);
    // Client input past the bound is refused rather than buffered without end.
    let mut refused = None;
    for _ in 0..(opencode_pty::limits::MAX_PENDING_INPUT_BYTES / (256 * 1024) + 64) {
        if let Err(error) = handle.write(None, vec![b'z'; 256 * 1024]) {
            refused = Some(error.to_string());
            break;
        }
    }
    let refused = refused.expect("input beyond the pending bound is refused");
    assert!(refused.starts_with("terminal input queue is full"), "{refused}");
    drop(observer);
    service.terminate(info.id).unwrap();
}

#[test]
fn a_late_controller_gets_exited_right_after_attached() {
    let service = service();
    let info = service.create_pty(sh("exit 0")).expect("create");
    let handle = service.pty(info.id).unwrap();
    read_until(
        &handle.subscribe(0, "a".into(), Role::Observer, ExistingController::Refuse).unwrap(),
        &mut Seen::default(),
        |s| s.exited().is_some(),
    );
    let late = handle.subscribe(0, "c".into(), Role::Controller, ExistingController::Refuse).unwrap();
    let mut seen = Seen::default();
    read_until(&late, &mut seen, |s| s.messages.len() >= 3);
    assert!(matches!(seen.messages[0], Response::Attached { .. }));
    assert!(matches!(seen.messages[1], Response::Exited { .. }), "{:?}", seen.messages);
    assert!(matches!(seen.messages[2], Response::ControllerChanged { .. }));
}

#[test]
fn resized_comes_before_any_later_output() {
    let service = service();
    let info = service.create_pty(sh("printf before; read go; printf after; sleep 30")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let observer = handle.subscribe(0, "o".into(), Role::Observer, ExistingController::Refuse).unwrap();
    read_until(&observer, &mut Seen::default(), |s| s.text().contains("before"));
    // Without a controller anyone may resize; the child's later output must follow the `resized` event.
    handle.resize(None, 100, 30).unwrap();
    handle.write(None, b"\r".to_vec()).unwrap();
    let mut log = Vec::new();
    log_until(&observer, &mut log, |e| is_output(e, "after"));
    let resized = log.iter().position(|e| e.starts_with("msg:Resized")).expect("resized");
    let after = log.iter().position(|e| is_output(e, "after")).expect("after");
    assert!(resized < after, "{log:?}");
    assert_eq!(service.get(info.id).unwrap().pty.map(|p| (p.cols.get(), p.rows.get())), Some((100, 30)));
}

#[test]
fn a_takeover_gets_through_to_a_stalled_controller_and_held_requests_follow_in_order() {
    let service = service();
    let info = service.create_pty(sh("sleep 60")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let stalled = handle.subscribe(0, "c".into(), Role::Controller, ExistingController::Refuse).unwrap();
    // Each rename publishes an event to the controller, which never reads: its channel fills, then the
    // actor's backlog for it, and from then on renames are held back (their callers wait).
    let renames = {
        let handle = handle.clone();
        std::thread::spawn(move || {
            for i in 0..(CONTROLLER_QUEUE_EVENTS + CONTROLLER_BACKLOG_EVENTS + 50) {
                handle.rename(Some(format!("title {i}"))).expect("rename");
            }
        })
    };
    // `get` is never held back, so it shows how far the renames got: close to where the controller stalls.
    let number = |title: String| title.strip_prefix("title ").and_then(|n| n.parse::<usize>().ok());
    let stall_point = CONTROLLER_QUEUE_EVENTS + CONTROLLER_BACKLOG_EVENTS - 10;
    support::eventually("the renames to reach the stall point", || {
        (number(service.get(info.id).ok()?.pty?.title)? >= stall_point).then_some(())
    });
    let last = format!("title {}", CONTROLLER_QUEUE_EVENTS + CONTROLLER_BACKLOG_EVENTS + 49);
    assert_ne!(service.get(info.id).unwrap().pty.unwrap().title, last, "the last renames are held back");
    // The takeover is not held back behind the deferred renames (before, it waited for them: 30 s, then failed).
    let started = Instant::now();
    let taker = handle.subscribe(0, "t".into(), Role::Controller, ExistingController::Replace).expect("takeover");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    // Now that the controller reads (it is `t`), the held renames run, in order.
    renames.join().unwrap();
    assert_eq!(service.get(info.id).unwrap().pty.unwrap().title, last);
    let mut log = Vec::new();
    log_until(&taker, &mut log, |e| e.contains(&last));
    drop((stalled, taker));
}

#[test]
fn an_idle_observer_is_dropped_for_too_many_json_events_too() {
    let service = service();
    let info = service.create_pty(sh("sleep 60")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let idle = handle.subscribe(0, "idle".into(), Role::Observer, ExistingController::Refuse).unwrap();
    // Title events carry no output bytes; without a count bound they would pile up without end.
    for i in 0..(OBSERVER_QUEUE_EVENTS + OBSERVER_BACKLOG_EVENTS + 100) {
        handle.rename(Some(format!("t{i}"))).unwrap();
    }
    let mut received = 0;
    loop {
        match idle.recv_timeout(support::WAIT) {
            Ok(_) => received += 1,
            Err(error) => {
                assert_eq!(error, crossbeam_channel::RecvTimeoutError::Disconnected, "dropped, not kept");
                break;
            }
        }
    }
    assert!(received <= OBSERVER_QUEUE_EVENTS + OBSERVER_BACKLOG_EVENTS + 1, "{received}");
}
