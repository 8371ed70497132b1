//! What a terminal waits for (SPEC I1–I6), in process: `pty.input` and `pty.alternate_screen` only for the
//! requests that name `input`, looked at afresh; `input_changed` only for the subscribers that asked, in order
//! with the output around it; nothing new for anyone else.

use crate::support;

use opencode_pty::{ExistingController, OptIns, ProcessSubscription, PtyHandle};
use opencode_pty_protocol::{InputWait, Mode, ProcessInfo, Response, Role};
use support::{Seen, is_output, log_until, observe, read_until, service, sh};

const INPUT: OptIns = OptIns { input: true, ..OptIns::NONE };

/// A subscription from offset 0 that asked for `input_changed`.
fn watch(handle: &PtyHandle, attachment: &str) -> ProcessSubscription {
    handle.subscribe_with(0, attachment.into(), Role::Observer, ExistingController::Refuse, INPUT).expect("subscribe")
}

/// The two members, as `(input, alternate_screen)`; `None` each when left out.
fn members(info: &ProcessInfo) -> (Option<Option<InputWait>>, Option<bool>) {
    let pty = info.pty.as_ref().expect("a terminal");
    (pty.input, pty.alternate_screen)
}

/// The keys of `pty` as JSON: what a client that knows no features gets.
fn pty_keys(info: &ProcessInfo) -> Vec<String> {
    let json = serde_json::to_value(info).expect("json");
    let mut keys: Vec<String> = json["pty"].as_object().expect("pty").keys().cloned().collect();
    keys.sort();
    keys
}

const PROTOCOL_8_PTY_KEYS: [&str; 5] = ["cols", "foreground_process", "rows", "title", "user_title"];

#[test]
fn a_request_that_names_input_gets_what_the_terminal_waits_for() {
    let service = service();
    let info = service.create_pty(sh("read x; less /etc/passwd; sleep 30")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let line = support::eventually("read waits for a line", || {
        let info = service.get_with(info.id, INPUT).unwrap();
        (members(&info) == (Some(Some(InputWait::Line)), Some(false))).then_some(info)
    });
    assert_eq!(members(&service.list_with(Mode::Pty, INPUT)[0]), members(&line));
    let Response::Rows { process, .. } = handle.read_rows_with(None, INPUT).unwrap() else { panic!("rows") };
    assert_eq!(members(&process), members(&line));
    handle.write(None, b"\r".to_vec()).unwrap();
    support::eventually("less waits for keys on the alternate screen", || {
        let Response::Snapshot { process, .. } = handle.snapshot_with(INPUT).unwrap() else { panic!("snapshot") };
        (members(&process) == (Some(Some(InputWait::Key)), Some(true))).then_some(())
    });
    handle.write(None, b"q".to_vec()).unwrap();
    support::eventually("sleep waits for nothing", || {
        let info = service.get_with(info.id, INPUT).unwrap();
        (members(&info) == (Some(None), Some(false))).then_some(())
    });
    // The members are present (`input` as null) when asked for, and left out when not.
    let json = serde_json::to_value(service.get_with(info.id, INPUT).unwrap()).unwrap();
    assert_eq!(json["pty"]["input"], serde_json::Value::Null);
    assert!(json["pty"].as_object().unwrap().contains_key("input"));
    service.terminate(info.id).unwrap();
}

#[test]
fn a_client_that_names_no_feature_sees_nothing_new() {
    let service = service();
    let info =
        service.create_pty(sh("printf 'ready\\n'; read x; printf 'got %s\\n' \"$x\"; sleep 30")).expect("create");
    assert_eq!(pty_keys(&info), PROTOCOL_8_PTY_KEYS, "created");
    let handle = service.pty(info.id).unwrap();
    // One subscriber asks for input_changed, so the terminal is looked at; the other must not hear of it.
    let watcher = watch(&handle, "watcher");
    let plain = observe(&service, info.id);
    let mut watched = Seen::default();
    read_until(&watcher, &mut watched, |s| {
        s.messages.contains(&Response::InputChanged { input: Some(InputWait::Line) })
            || s.messages.iter().any(|m| {
                matches!(m, Response::Attached { process, .. } if process.pty.as_ref().unwrap().input == Some(Some(InputWait::Line)))
            })
    });
    handle.write(None, b"abc\r".to_vec()).unwrap();
    read_until(&watcher, &mut watched, |s| s.messages.contains(&Response::InputChanged { input: None }));
    let mut seen = Seen::default();
    read_until(&plain, &mut seen, |s| s.text().contains("got abc"));
    let Response::Attached { process, .. } = &seen.messages[0] else { panic!("attached first: {:?}", seen.messages) };
    assert_eq!(pty_keys(process), PROTOCOL_8_PTY_KEYS, "attached");
    assert!(
        !seen.messages.iter().any(|m| matches!(m, Response::InputChanged { .. })),
        "an input_changed reached a subscriber that did not ask: {:?}",
        seen.messages
    );
    assert_eq!(pty_keys(&service.get(info.id).unwrap()), PROTOCOL_8_PTY_KEYS, "get");
    assert_eq!(pty_keys(&service.list(Mode::Pty)[0]), PROTOCOL_8_PTY_KEYS, "list");
    let Response::Snapshot { process, .. } = handle.snapshot().unwrap() else { panic!("snapshot") };
    assert_eq!(pty_keys(&process), PROTOCOL_8_PTY_KEYS, "snapshot");
    let Response::Rows { process, .. } = handle.read_rows(None).unwrap() else { panic!("rows") };
    assert_eq!(pty_keys(&process), PROTOCOL_8_PTY_KEYS, "rows");
    assert_eq!(pty_keys(&handle.last_info()), PROTOCOL_8_PTY_KEYS, "published info");
    service.terminate(info.id).unwrap();
}

#[test]
fn input_changed_comes_in_order_with_the_output_around_it() {
    let service = service();
    // Each prompt is printed after a pause and before its read starts: the terminal waits for nothing during
    // the pause, then for a line (a password), and each event comes after the output printed before it.
    let script = "read go; sleep 0.3; printf 'first> '; read a; sleep 0.3; printf 'second> '; stty -echo; read b; stty echo; \
                  printf 'done\\n'; sleep 30";
    let info = service.create_pty(sh(script)).expect("create");
    let handle = service.pty(info.id).unwrap();
    let watcher = watch(&handle, "watcher");
    let mut log = Vec::new();
    log_until(&watcher, &mut log, |e| e.contains("Attached"));
    // The first read is waited for (said by `attached` or by an event once the shell gets there).
    support::eventually("read go", || {
        let info = service.get_with(info.id, INPUT).unwrap();
        (info.pty.unwrap().input == Some(Some(InputWait::Line))).then_some(())
    });
    let is_event = |e: &str, value: &str| e.contains("InputChanged") && e.contains(value);
    // The watcher hears it too (unless `attached` said it): read up to there before typing.
    if !log[0].contains("input: Some(Some(Line))") {
        log_from(&watcher, &mut log, 0, |e| is_event(e, "Line"));
    }
    let first = log.len();
    handle.write(None, b"\r".to_vec()).unwrap();
    log_from(&watcher, &mut log, first, |e| is_event(e, "Line"));
    let second = log.len();
    handle.write(None, b"1\r".to_vec()).unwrap();
    log_from(&watcher, &mut log, second, |e| is_event(e, "Password"));
    handle.write(None, b"2\r".to_vec()).unwrap();
    log_from(&watcher, &mut log, second, |e| is_output(e, "done"));
    for (from, prompt, value) in [(first, "first> ", "Line"), (second, "second> ", "Password")] {
        let after = &log[from..];
        let at = |what: &dyn Fn(&str) -> bool| after.iter().position(|e| what(e)).unwrap_or_else(|| panic!("{log:?}"));
        let pause = at(&|e| is_event(e, "None"));
        let printed = at(&|e| is_output(e, prompt));
        let reading = at(&|e| is_event(e, value));
        assert!(pause < printed && printed < reading, "{prompt}: {log:?}");
    }
    service.terminate(info.id).unwrap();
}

/// [`log_until`] for an entry at `from` or later.
fn log_from(subscription: &ProcessSubscription, log: &mut Vec<String>, from: usize, done: impl Fn(&str) -> bool) {
    let deadline = std::time::Instant::now() + support::WAIT;
    while !log[from..].iter().any(|e| done(e)) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match subscription.recv_timeout(left).unwrap_or_else(|e| panic!("no event ({e:?}); logged: {log:?}")) {
            opencode_pty::Event::Output(chunk) => log.push(format!("out:{}", String::from_utf8_lossy(chunk.bytes()))),
            opencode_pty::Event::Message(message) => log.push(format!("msg:{message:?}")),
        }
    }
}
