//! The terminal runtime end to end, in process: real PTY children, the actor, replay, subscriptions, exit.

use crate::support;

use base64::Engine;
use opencode_pty::ExistingController;
use opencode_pty::ServiceError;
use opencode_pty_protocol::{Lifecycle, Mode, Response, Role};
use support::{Seen, is_output, log_until, observe, process_exists, read_until, service, sh, until_exit};

/// Waits (bounded) until process `id`'s foreground process is `name`.
fn until_foreground(service: &opencode_pty::ProcessService, id: u64, name: &str) {
    support::eventually("the foreground process", || {
        let pty = service.get(id).ok()?.pty?;
        (pty.foreground_process.as_deref() == Some(name)).then_some(())
    });
}

fn output_contains(text: &'static str) -> impl Fn(&Seen) -> bool {
    move |seen: &Seen| seen.text().contains(text)
}

#[test]
fn output_reaches_a_subscriber_and_the_exit_follows_it() {
    let service = service();
    let info = service.create_pty(sh("printf 'hello\\n'; exit 3")).expect("create");
    assert_eq!(info.id, 1);
    let handle = service.pty(info.id).expect("handle");
    let subscription = handle.subscribe(0, "a".into(), Role::Observer, ExistingController::Refuse).expect("subscribe");
    let mut seen = Seen::default();
    read_until(&subscription, &mut seen, |s| s.exited().is_some());
    assert!(matches!(seen.messages[0], Response::Attached { .. }), "attached comes first");
    assert!(seen.text().contains("hello"));
    let Some(Response::Exited { exit_code, signal, final_offset, exited_at, .. }) = seen.exited().cloned() else {
        unreachable!()
    };
    assert_eq!((exit_code, signal), (Some(3), None));
    assert_eq!(final_offset, seen.end.expect("offsets"), "the exit comes after every byte");
    let info = service.get(info.id).expect("get");
    assert!(exited_at >= info.started_at);
    assert_eq!(info.exited_at, Some(exited_at));
    assert_eq!(info.lifecycle, Lifecycle::Exited { exit_code: Some(3), signal: None });
}

#[test]
fn a_signal_death_is_reported_by_name() {
    let service = service();
    let info = service.create_pty(sh("kill -TERM $$")).expect("create");
    let seen = until_exit(&service, info.id);
    let Some(Response::Exited { exit_code, signal, .. }) = seen.exited() else { unreachable!() };
    assert_eq!((exit_code, signal.as_deref()), (&None, Some("SIGTERM")));
}

#[test]
fn a_late_subscriber_gets_exited_right_after_attached() {
    let service = service();
    let info = service.create_pty(sh("printf done")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let first = handle.subscribe(0, "a".into(), Role::Observer, ExistingController::Refuse).unwrap();
    read_until(&first, &mut Seen::default(), |s| s.exited().is_some());
    let late = handle.subscribe(0, "b".into(), Role::Observer, ExistingController::Refuse).unwrap();
    let mut seen = Seen::default();
    read_until(&late, &mut seen, |s| s.messages.len() >= 2);
    assert!(matches!(seen.messages[0], Response::Attached { .. }));
    assert!(matches!(seen.messages[1], Response::Exited { .. }));
    assert_eq!(seen.text(), "done", "the replay carries the output");
}

#[test]
fn parser_replies_reach_the_child() {
    let service = service();
    // The child asks for the cursor position and prints what it reads back.
    let script =
        "stty raw -echo; printf '\\033[6n'; reply=$(dd bs=1 count=6 2>/dev/null); printf 'got[%s]' \"$reply\" | od -c";
    let info = service.create_pty(sh(script)).expect("create");
    let seen = until_exit(&service, info.id);
    assert!(seen.text().contains("033   [   1   ;   1   R"), "{}", seen.text());
}

#[test]
fn live_output_is_coalesced_and_contiguous() {
    let service = service();
    let info = service.create_pty(sh("stty raw; head -c 300000 /dev/zero | tr '\\0' x")).expect("create");
    let subscription =
        service.pty(info.id).unwrap().subscribe(0, "a".into(), Role::Controller, ExistingController::Refuse).unwrap();
    let mut seen = Seen::default();
    read_until(&subscription, &mut seen, |s| s.exited().is_some());
    assert_eq!(seen.output.iter().filter(|&&b| b == b'x').count(), 300_000);
    assert!(seen.chunk_sizes.iter().all(|&n| n <= 8 * 1024), "no live frame over 8 KiB");
}

#[test]
fn replay_reads_from_an_offset_and_refuses_the_future() {
    let service = service();
    let info = service.create_pty(sh("printf abcdef")).expect("create");
    let handle = service.pty(info.id).unwrap();
    read_until(&observe(&service, info.id), &mut Seen::default(), |s| s.exited().is_some());
    let read = handle.replay(2).expect("replay");
    assert_eq!((read.available, read.end, read.truncated, read.bytes.as_slice()), (2, 6, false, &b"cdef"[..]));
    let error = handle.replay(7).unwrap_err();
    assert_eq!(error.to_string(), "requested offset 7 is beyond tail 6");
}

#[test]
fn titles_follow_osc_and_rename() {
    let service = service();
    // The child sets its title only once told to, so the subscription sees the change as an event.
    let info = service.create_pty(sh("read go; printf '\\033]2;from osc\\007'; sleep 30")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let subscription = handle.subscribe(0, "a".into(), Role::Observer, ExistingController::Refuse).unwrap();
    handle.write(None, b"go\r".to_vec()).unwrap();
    let mut seen = Seen::default();
    let title_changed = |title: &'static str| {
        move |s: &Seen| s.messages.iter().any(|m| *m == Response::TitleChanged { title: title.into() })
    };
    read_until(&subscription, &mut seen, title_changed("from osc"));
    handle.rename(Some("mine".into())).unwrap();
    read_until(&subscription, &mut seen, title_changed("mine"));
    let pty = service.get(info.id).unwrap().pty.unwrap();
    assert_eq!((pty.title.as_str(), pty.user_title.as_deref()), ("mine", Some("mine")));
    handle.rename(None).unwrap();
    read_until(&subscription, &mut seen, |s| {
        s.messages.iter().filter(|m| **m == Response::TitleChanged { title: "from osc".into() }).count() == 2
    });
    assert_eq!(service.get(info.id).unwrap().pty.unwrap().user_title, None);
}

#[test]
fn snapshot_and_rows_see_the_screen() {
    let service = service();
    let info = service.create_pty(sh("printf 'one\\r\\ntwo'; sleep 30")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let mut seen = Seen::default();
    read_until(&observe(&service, info.id), &mut seen, output_contains("two"));
    // `two` is printed just before the shell starts `sleep`: wait for that too.
    until_foreground(&service, info.id, "sleep");
    handle.rename(Some("named".into())).unwrap();
    let Response::Snapshot { process, text, cursor_x, cursor_y, checkpoint_base64 } = handle.snapshot().unwrap() else {
        panic!("not a snapshot")
    };
    assert_eq!((text.as_str(), cursor_x, cursor_y), ("one\ntwo", 3, 1));
    // The checkpoint recreates the screen.
    let checkpoint = base64::engine::general_purpose::STANDARD.decode(checkpoint_base64).unwrap();
    let replayed = String::from_utf8_lossy(&checkpoint);
    assert!(replayed.contains("one") && replayed.contains("two"), "{replayed:?}");
    // Process info, replay bounds, titles, size and the (refreshed) foreground process come with it.
    assert_eq!(
        (process.id, process.lifecycle, process.output_head, process.output_tail),
        (info.id, Lifecycle::Running, 0, seen.end.unwrap())
    );
    let pty = process.pty.expect("pty info");
    assert_eq!((pty.title.as_str(), pty.user_title.as_deref()), ("named", Some("named")));
    assert_eq!((pty.cols.get(), pty.rows.get()), (80, 24));
    assert_eq!(pty.foreground_process.as_deref(), Some("sleep"));
    let Response::Rows { lines, .. } = handle.read_rows(None).unwrap() else { panic!("not rows") };
    assert_eq!(lines.len(), 24, "rows default to the terminal height");
    assert_eq!(&lines[..3], ["one", "two", ""]);
    assert_eq!(handle.read_rows(Some(0)).unwrap_err().to_string(), "row count must be positive");
}

#[test]
fn bad_specs_are_refused_before_anything_runs() {
    let service = service();
    let mut empty = sh("true");
    empty.program = "  ".into();
    assert_eq!(service.create_pty(empty).unwrap_err().to_string(), "terminal program cannot be empty");
    let mut zero = sh("true");
    zero.cols = 0;
    assert_eq!(service.create_pty(zero).unwrap_err().to_string(), "terminal dimensions must be positive (got 0x24)");
    let mut relative = sh("true");
    relative.cwd = "tmp".into();
    assert_eq!(service.create_pty(relative).unwrap_err().to_string(), "cwd must be an absolute path (got tmp)");
    let mut missing = sh("true");
    missing.program = "/nonexistent/program".into();
    assert!(matches!(service.create_pty(missing), Err(ServiceError::Spawn { .. })));
    // A program that exists but cannot be executed (its interpreter is missing) fails the same way.
    let script = std::env::temp_dir().join(format!("opencode-pty-badexec-{}", std::process::id()));
    std::fs::write(&script, "#!/nonexistent/interpreter\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut bad_exec = sh("true");
    bad_exec.program = script.display().to_string();
    bad_exec.args.clear();
    let result = service.create_pty(bad_exec);
    std::fs::remove_file(&script).unwrap();
    assert!(matches!(result, Err(ServiceError::Spawn { .. })), "{result:?}");
    assert!(service.list(Mode::Pty).is_empty(), "a failed start is never listed");
}

#[test]
fn terminate_kills_the_child_and_a_second_terminate_fails() {
    let service = service();
    let info = service.create_pty(sh("sleep 30")).expect("create");
    let pid = info.pid.expect("pid");
    assert!(process_exists(pid));
    service.terminate(info.id).expect("terminate");
    assert!(!process_exists(pid), "the child is killed and reaped");
    assert_eq!(service.terminate(info.id).unwrap_err(), ServiceError::NotFound(info.id));
}

#[test]
fn one_exit_does_not_stop_another_and_shutdown_stops_all() {
    let service = service();
    let short = service.create_pty(sh("exit 0")).expect("create");
    let long = service.create_pty(sh("sleep 30")).expect("create");
    until_exit(&service, short.id);
    let list = service.list(Mode::Pty);
    assert_eq!(list.iter().map(|p| p.id).collect::<Vec<_>>(), [short.id, long.id], "creation order");
    assert_eq!(list[1].lifecycle, Lifecycle::Running);
    service.shutdown();
    assert!(!process_exists(long.pid.unwrap()));
    assert!(service.list(Mode::Pty).is_empty());
    let refused = service.create_pty(sh("true")).unwrap_err();
    assert_eq!(refused.to_string(), "the daemon is shutting down", "nothing starts after shutdown");
}

#[test]
fn pty_children_get_term_and_colorterm_unless_env_sets_them_and_find_programs_on_their_path() {
    let service = service();
    let mut spec = sh("printf '[%s %s %s]' \"$TERM\" \"$COLORTERM\" \"$FROM_REQUEST\"");
    spec.env.insert("FROM_REQUEST".into(), "yes".into());
    let info = service.create_pty(spec).expect("create");
    let seen = until_exit(&service, info.id);
    assert_eq!(seen.text(), "[xterm-256color truecolor yes]");

    let mut spec = sh("printf '[%s]' \"$TERM\"");
    spec.env.insert("TERM".into(), "dumb".into());
    let info = service.create_pty(spec).expect("create");
    let seen = until_exit(&service, info.id);
    assert_eq!(seen.text(), "[dumb]");

    // The program is looked up on the child's PATH, not the daemon's.
    let dir = std::env::temp_dir().join(format!("opencode-pty-path-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tool = dir.join("only-here");
    std::fs::write(&tool, "#!/bin/sh\nprintf found\n").unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(&mut std::fs::metadata(&tool).unwrap().permissions(), 0o755);
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut spec = sh("");
    spec.program = "only-here".into();
    spec.args.clear();
    spec.env.insert("PATH".into(), format!("{}:/usr/bin:/bin", dir.display()));
    let info = service.create_pty(spec).expect("found on the child's PATH");
    let seen = until_exit(&service, info.id);
    assert_eq!(seen.text(), "found");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_foreground_process_is_refreshed_by_get_and_published() {
    let service = service();
    // The child starts its jobs only once subscribed, so the change to `sleep` happens under the subscription.
    let info = service.create_pty(sh("read go; tail -f /dev/null & sleep 30")).expect("create");
    let handle = service.pty(info.id).unwrap();
    let subscription = handle.subscribe(0, "a".into(), Role::Observer, ExistingController::Refuse).unwrap();
    handle.write(None, b"\r".to_vec()).unwrap();
    let name = support::eventually("sleep in the foreground", || {
        service.get(info.id).unwrap().pty.unwrap().foreground_process.filter(|name| name == "sleep")
    });
    assert_eq!(name, "sleep");
    let mut seen = Seen::default();
    read_until(&subscription, &mut seen, |s| {
        s.messages.iter().any(|m| *m == Response::ForegroundProcessChanged { process: Some("sleep".into()) })
    });
    assert_eq!(service.list(Mode::Pty)[0].pty.as_ref().unwrap().foreground_process.as_deref(), Some("sleep"));
    // Terminate kills the background `tail` too (the whole process group).
    service.terminate(info.id).unwrap();
}

#[test]
fn pending_output_goes_out_before_the_next_event() {
    let service = service();
    // The title event follows the output chunk that set it, and precedes any later output.
    let info = service
        .create_pty(sh("read go; printf 'before\\033]2;t\\007'; read again; printf after; sleep 30"))
        .expect("create");
    let handle = service.pty(info.id).unwrap();
    let subscription = observe(&service, info.id);
    let mut log = Vec::new();
    handle.write(None, b"\r".to_vec()).unwrap();
    log_until(&subscription, &mut log, |e| e.starts_with("msg:TitleChanged"));
    handle.write(None, b"\r".to_vec()).unwrap();
    log_until(&subscription, &mut log, |e| is_output(e, "after"));
    let output = |text: &str| log.iter().rposition(|e| is_output(e, text)).expect(text);
    let title = log.iter().position(|e| e.starts_with("msg:TitleChanged")).expect("title");
    let (before, after) = (output("before"), output("after"));
    assert!(before < title && title < after, "{log:?}");
}

#[test]
fn reading_rows_changes_nothing() {
    let service = service();
    let info = service.create_pty(sh("printf 'a\\r\\nb'; sleep 30")).expect("create");
    let handle = service.pty(info.id).unwrap();
    read_until(&observe(&service, info.id), &mut Seen::default(), output_contains("b"));
    // A snapshot also refreshes the foreground process: wait until the shell has started `sleep`, so the only
    // thing that could change between the two snapshots is what the row reads did.
    until_foreground(&service, info.id, "sleep");
    let before = handle.snapshot().unwrap();
    handle.read_rows(Some(5)).unwrap();
    handle.read_rows(None).unwrap();
    assert_eq!(handle.snapshot().unwrap(), before);
}

#[test]
fn exited_waits_for_the_end_of_the_output() {
    let service = service();
    // The child's last output is still in the PTY when it exits: `exited` waits for the end of the output
    // and includes all of it.
    let info =
        service.create_pty(sh("stty raw -echo; head -c 2000000 /dev/zero | tr '\\0' x; exit 0")).expect("create");
    let seen = until_exit(&service, info.id);
    assert_eq!(seen.output.iter().filter(|&&b| b == b'x').count(), 2_000_000, "every byte comes before `exited`");
    let Some(Response::Exited { final_offset, exit_code, .. }) = seen.exited() else { unreachable!() };
    assert_eq!((*final_offset, *exit_code), (seen.end.unwrap(), Some(0)));
}

#[test]
fn the_replay_buffer_size_is_configurable() {
    let service = opencode_pty::ProcessService::new(opencode_pty::TerminalConfig {
        replay_bytes: 16,
        scrollback_lines: 100,
        ..Default::default()
    });
    let info = service.create_pty(sh("printf '0123456789abcdefghijklmnopqrstuvwxyz'")).expect("create");
    let handle = service.pty(info.id).unwrap();
    read_until(&observe(&service, info.id), &mut Seen::default(), |s| s.exited().is_some());
    let read = handle.replay(0).unwrap();
    assert_eq!((read.available, read.end, read.truncated), (20, 36, true));
    assert_eq!(read.bytes, b"klmnopqrstuvwxyz");
}

#[test]
fn the_replay_keeps_the_last_2_mib_by_default() {
    let service = service();
    // 3 MiB without newlines, so the PTY adds nothing: the first MiB falls out of the replay.
    let info = service.create_pty(sh("stty raw -echo; head -c 3145728 /dev/zero | tr '\\0' a")).expect("create");
    let handle = service.pty(info.id).unwrap();
    read_until(&observe(&service, info.id), &mut Seen::default(), |s| s.exited().is_some());
    let read = handle.replay(0).unwrap();
    assert_eq!((read.available, read.end, read.truncated), (1 << 20, 3 << 20, true));
    assert_eq!(read.bytes.len(), 2 << 20);
    assert!(read.bytes.iter().all(|&b| b == b'a'));
}

#[test]
fn terminate_kills_the_whole_process_group() {
    let service = service();
    let info = service.create_pty(sh("sleep 30 & printf 'bg=%s;' $!; wait")).expect("create");
    let subscription = observe(&service, info.id);
    let mut seen = Seen::default();
    read_until(&subscription, &mut seen, |s| s.text().contains(';'));
    let text = seen.text();
    let background: u32 = text[text.find("bg=").unwrap() + 3..text.find(';').unwrap()].parse().unwrap();
    assert!(process_exists(background));
    drop(subscription);
    service.terminate(info.id).unwrap();
    // The background job was in the child's process group: killed too (a zombie until its parent is reaped).
    support::eventually("the background process to die", || {
        let state = std::fs::read_to_string(format!("/proc/{background}/stat")).unwrap_or_default();
        (state.is_empty() || state.contains(") Z ")).then_some(())
    });
}

#[test]
fn terminate_never_publishes_the_exit_its_own_kill_causes() {
    let service = service();
    // Many rounds: the kill used to come before the stop, leaving a window in which the terminal could see the
    // killed child's exit and publish it.
    for round in 0..40 {
        let id = service.create_pty(sh("exec cat")).expect("create").id;
        let subscription = observe(&service, id);
        service.terminate(id).expect("terminate");
        loop {
            match subscription.recv_timeout(std::time::Duration::from_secs(30)) {
                Ok(opencode_pty::Event::Message(message)) => {
                    assert!(
                        !matches!(message.response(), Response::Exited { .. }),
                        "round {round}: a terminated terminal published exited"
                    );
                }
                Ok(_) => {}
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
                Err(error) => panic!("round {round}: the subscription did not end: {error}"),
            }
        }
    }
}

#[test]
fn the_actor_wakes_at_the_end_of_the_coalescing_window_without_the_default_slack() {
    let service = service();
    let id = service.create_pty(sh("exec cat")).expect("create").id;
    // Every actor of this process sets it as it starts (other tests' included), so any one found will do; one
    // only just started may not have yet (seen once under load in CI): looked at again until one has. Without
    // the setting none ever would, and the wait fails.
    let wanted = opencode_pty::limits::COALESCE_TIMER_SLACK_NS;
    let slack = support::eventually("an actor thread with its timer slack", || {
        let tasks = std::fs::read_dir("/proc/self/task").ok()?;
        tasks.filter_map(Result::ok).find_map(|task| {
            let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
            // Per thread, but only under /proc/<tid>/, not /proc/self/task/<tid>/.
            let slack = format!("/proc/{}/timerslack_ns", task.file_name().to_string_lossy());
            let slack = (comm.trim_end() == "opencode-pty-ac").then(|| std::fs::read_to_string(slack).ok())??;
            (slack.trim().parse::<u64>().ok() == Some(wanted)).then_some(slack)
        })
    });
    assert_eq!(slack.trim().parse::<u64>().ok(), Some(opencode_pty::limits::COALESCE_TIMER_SLACK_NS));
    service.terminate(id).expect("terminate");
}
