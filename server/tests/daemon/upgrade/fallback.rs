//! Upgrades that do not happen, through the real binary: each refusal (a relative path, a missing file, a
//! program writable by others, a preflight that fails, a request from another connection than the owner's)
//! changes nothing; an `execve` that does not happen, and a new program that passes the preflight but refuses
//! the state, both leave the old image serving with every process, and the owner told why.

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixStream;

use serde_json::{Value, json};

use super::{Count, STEADY, create, create_pipe, pids, private_copy, registration, script, upgrade};
use crate::support::{self, Daemon, binary, eventually, message, recv, recv_frame, send, wait_dead};

#[test]
fn refused_upgrades_change_nothing() {
    let daemon = Daemon::start();
    let mut owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let (id, pid) = create(&daemon, "echo ready; exec sleep 600");
    let before = (registration(&daemon), pids(&daemon));
    let failing = script(dir.path(), "failing", "echo 'this build is broken' >&2; exit 3");
    let open = script(dir.path(), "open", "exit 0");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let cases: [(Value, &str); 4] = [
        (json!({"op": "upgrade", "program": "relative/opencode-pty"}), "the path is relative"),
        (json!({"op": "upgrade", "program": dir.path().join("missing")}), "no such file"),
        (json!({"op": "upgrade", "program": failing}), "this build is broken"),
        (json!({"op": "upgrade", "program": open}), "writable by its group or by others"),
    ];
    for (request, expected) in cases {
        send(&mut owner, &daemon.envelope(request.clone()));
        let answer = recv(&mut owner).expect("an answer");
        assert!(message(&answer).contains(expected), "{request}: {answer}");
    }
    // Only the owner channel may ask.
    let answer = daemon.request(json!({"op": "upgrade", "program": binary()}));
    assert_eq!(message(&answer), "upgrade requires the owner connection");
    // Nothing changed: the same daemon, process and owner.
    assert_eq!((registration(&daemon), pids(&daemon)), before);
    assert_eq!(pids(&daemon).get(&id), Some(&u64::from(pid)));
    send(&mut owner, &daemon.envelope(json!({"op": "prepare_handoff"})));
    assert_eq!(recv(&mut owner).expect("a handoff")["type"], "handoff");
}

#[test]
fn a_new_program_that_refuses_the_state_leaves_the_old_image_serving() {
    let daemon = Daemon::start();
    let mut owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let copy = private_copy(dir.path());
    // It answers the preflight as this build does, then refuses any state it is given.
    let body = format!(
        "case \"$1\" in\nupgrade-check) exec '{copy}' upgrade-check ;;\nresume) shift; exec '{copy}' resume --refuse-state \"$@\" ;;\nesac\nexit 2",
        copy = copy.display()
    );
    let program = script(dir.path(), "new-build", &body);
    let (id, _) = create(&daemon, STEADY);
    let (mut follower, attached) = daemon.subscribe(id, "follower", "controller");
    let mut seen = support::replay_of(&attached);
    support::frames_until(&mut follower, &mut seen, "some output", |text, _| text.contains("\r\n50\r\n"));
    let before = (registration(&daemon), pids(&daemon));

    let answer = upgrade(&daemon, &mut owner, Some(&program));
    let refusal = message(&answer);
    assert!(refusal.contains("told to refuse it (--refuse-state)"), "{refusal}");
    assert!(refusal.contains("the previous executable resumed with it"), "{refusal}");
    // The script ran from the descriptor that was checked, which its interpreter left open across its own
    // exec: the image that resumed closed it.
    assert_eq!(super::descriptors_to(daemon.pid(), &program), 0, "the script's descriptor is left open");
    // The old image serves: the same daemon and process, output contiguous from where the subscriber was.
    assert_eq!((registration(&daemon), pids(&daemon)), before);
    while recv_frame(&mut follower).is_some() {}
    let (mut again, attached) = {
        let mut stream = daemon.connect();
        let offset = seen.len();
        send(
            &mut stream,
            &daemon.envelope(json!({"op": "subscribe", "id": id, "offset": offset,
            "attachment_id": "follower", "role": "controller", "takeover": false})),
        );
        let attached = recv(&mut stream).expect("attached");
        (stream, attached)
    };
    assert_eq!(attached["available_offset"].as_u64(), Some(seen.len() as u64), "{attached}");
    seen.extend(support::replay_of(&attached));
    support::frames_until(&mut again, &mut seen, "output after the fallback", |text, _| text.contains("\r\n3000\r\n"));
    let mut count = Count::default();
    let whole = seen.len() - seen.iter().rev().position(|b| *b == b'\n').unwrap_or(0);
    count.feed(&seen[..whole], b"\r\n");
    // Still the owner, and a second upgrade (to a build that takes the state) works.
    let answer = upgrade(&daemon, &mut owner, Some(&copy));
    assert_eq!(answer, json!({"type": "ok"}));
    assert_eq!((registration(&daemon), pids(&daemon)), before);
}

#[test]
fn an_exec_that_does_not_happen_puts_everything_back_in_the_same_image() {
    let daemon = Daemon::start();
    let mut owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let copy = private_copy(dir.path());
    // It passes the preflight, and replaces itself meanwhile: the file executed would not be the one checked.
    let body = format!("'{copy}' upgrade-check && cp \"$0\" \"$0.new\" && mv \"$0.new\" \"$0\"", copy = copy.display());
    let program = script(dir.path(), "replaced", &body);
    let (id, _) = create(&daemon, STEADY);
    let (quiet, _) = create(&daemon, "printf 'still here'; exec sleep 600");
    let (mut follower, attached) = daemon.subscribe(id, "follower", "controller");
    let mut seen = support::replay_of(&attached);
    support::frames_until(&mut follower, &mut seen, "some output", |text, _| text.contains("\r\n50\r\n"));
    let before = (registration(&daemon), pids(&daemon));
    let screen = || daemon.request(json!({"op": "snapshot", "id": quiet}))["text"].clone();
    let screen = eventually("the quiet terminal's output", || Some(screen()).filter(|text| *text == "still here"));

    let answer = upgrade(&daemon, &mut owner, Some(&program));
    let refusal = message(&answer);
    assert!(refusal.starts_with("the upgrade did not happen: "), "{refusal}");
    assert!(refusal.contains("the file changed since it was checked"), "{refusal}");
    // The same image serves on, with every process restored from the state it captured.
    assert_eq!((registration(&daemon), pids(&daemon)), before);
    assert_eq!(daemon.request(json!({"op": "snapshot", "id": quiet}))["text"], screen);
    follows_on_after_the_fallback(&daemon, id, follower, seen);
    // New connections are accepted again, and the owner can still upgrade.
    let answer = upgrade(&daemon, &mut owner, Some(&copy));
    assert_eq!(answer, json!({"type": "ok"}));
    assert_eq!((registration(&daemon), pids(&daemon)), before);
}

#[test]
fn a_new_image_that_fails_once_it_took_the_descriptors_gives_everything_back() {
    let mut daemon = Daemon::start();
    let mut owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let copy = private_copy(dir.path());
    // It answers the preflight as this build does, then fails at the last step before it would commit: it has
    // adopted every descriptor, written the registration, taken the lock and started its threads by then.
    let body = format!(
        "case \"$1\" in\nupgrade-check) exec '{copy}' upgrade-check ;;\nresume) shift; exec '{copy}' resume --fail-late \"$@\" ;;\nesac\nexit 2",
        copy = copy.display()
    );
    let program = script(dir.path(), "new-build", &body);
    let (id, _) = create(&daemon, STEADY);
    let (_, pipe) = create_pipe(&daemon, &dir.path().join("out.log"), "exec sleep 600");
    let _left = support::KillOnDrop(pipe);
    let (mut follower, attached) = daemon.subscribe(id, "follower", "controller");
    let mut seen = support::replay_of(&attached);
    support::frames_until(&mut follower, &mut seen, "some output", |text, _| text.contains("\r\n50\r\n"));
    let guardian = eventually("the guardian", || super::guardian_of(daemon.pid()));
    let before = (registration(&daemon), pids(&daemon));

    let answer = upgrade(&daemon, &mut owner, Some(&program));
    let refusal = message(&answer);
    assert!(refusal.contains("told to fail at the last step before the commit (--fail-late)"), "{refusal}");
    assert!(refusal.contains("the previous executable resumed with it"), "{refusal}");
    // The old image serves with every process, the same guardian, and the output contiguous.
    assert_eq!((registration(&daemon), pids(&daemon)), before);
    assert_eq!(super::guardian_of(daemon.pid()), Some(guardian), "the same guardian");
    follows_on_after_the_fallback(&daemon, id, follower, seen);
    // The lock is still held: the owner upgrades to a build that takes the state, then stops everything.
    assert_eq!(upgrade(&daemon, &mut owner, Some(&copy)), json!({"type": "ok"}));
    assert_eq!((registration(&daemon), pids(&daemon)), before);
    send(&mut owner, &daemon.envelope(json!({"op": "shutdown"})));
    assert_eq!(recv(&mut owner).expect("ok"), json!({"type": "ok"}));
    assert!(daemon.wait_exit().success());
    wait_dead("the pipe process", pipe);
}

/// Reads `follower` (the controller of terminal `id`, whose output so far is `seen`) to its end, subscribes
/// again from there and reads on: the image that served on holds every byte, and the count goes on without a
/// gap or a repeat.
fn follows_on_after_the_fallback(daemon: &Daemon, id: u64, mut follower: UnixStream, mut seen: Vec<u8>) {
    while recv_frame(&mut follower).is_some() {}
    let mut again = daemon.connect();
    send(
        &mut again,
        &daemon.envelope(json!({"op": "subscribe", "id": id, "offset": seen.len(),
        "attachment_id": "follower", "role": "controller", "takeover": false})),
    );
    let attached = recv(&mut again).expect("attached");
    assert_eq!(attached["available_offset"].as_u64(), Some(seen.len() as u64), "{attached}");
    seen.extend(support::replay_of(&attached));
    support::frames_until(&mut again, &mut seen, "output after the fallback", |text, _| text.contains("\r\n3000\r\n"));
    let whole = seen.len() - seen.iter().rev().position(|b| *b == b'\n').unwrap_or(0);
    Count::default().feed(&seen[..whole], b"\r\n");
}
