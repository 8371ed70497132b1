//! The controller kept across an upgrade, through the real binary: before its client has subscribed again, the
//! controller's attachment may type and claim a size (its input reaches the child), and if it never comes back
//! the terminal is not stuck with it: another attachment claims control as it would from any controller.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use opencode_pty_protocol::Frame;
use serde_json::json;

use super::{create, private_copy, upgrade};
use crate::support::{Daemon, frames_until, message, recv_frame, replay_of};

#[test]
fn the_kept_controller_types_before_it_subscribes_again_and_others_can_claim_control_from_it() {
    let daemon = Daemon::start();
    let mut owner = daemon.own();
    let dir = tempfile::tempdir().unwrap();
    let program = private_copy(dir.path());
    let (id, _) = create(&daemon, "echo ready; read line; echo \"got:$line\"; exec sleep 600");
    let (mut controller, attached) = daemon.subscribe(id, "ctl", "controller");
    assert_eq!(attached["role"], "controller", "{attached}");
    let generation = attached["generation"].as_u64().expect("generation");
    let mut seen = replay_of(&attached);
    frames_until(&mut controller, &mut seen, "the child to start", |text, _| text.contains("ready"));

    assert_eq!(upgrade(&daemon, &mut owner, Some(&program)), json!({"type": "ok"}));
    // At once, before the controller subscribes again: its input is taken, and so is its claim of a new size.
    let input = daemon.request(json!({"op": "input", "id": id, "attachment_id": "ctl", "cols": 80, "rows": 24,
        "data_base64": BASE64.encode("hello\r")}));
    assert_eq!(input, json!({"type": "ok"}), "the controller's input before it resubscribed");
    let control = daemon.request(json!({"op": "control", "id": id, "attachment_id": "ctl", "cols": 100, "rows": 30}));
    assert_eq!(control, json!({"type": "ok"}), "the controller's claim before it resubscribed");
    // Its old subscription ended at the upgrade, without `exited`.
    while let Some(frame) = recv_frame(&mut controller) {
        if let Frame::Control(event) = frame {
            assert_ne!(event["type"], "exited", "{event:?}");
        }
    }

    // The child read the input; the controller and its generation are unchanged, the size is the one claimed.
    let (mut watcher, attached) = daemon.subscribe(id, "watch", "observer");
    assert_eq!((attached["role"].as_str(), attached["generation"].as_u64()), (Some("observer"), Some(generation)));
    let pty = &attached["process"]["pty"];
    assert_eq!((pty["cols"].as_u64(), pty["rows"].as_u64()), (Some(100), Some(30)), "{attached}");
    let mut seen = replay_of(&attached);
    frames_until(&mut watcher, &mut seen, "the child to read the input", |text, _| text.contains("got:hello"));

    // The controller does not come back. It is refused to others as any controller would be...
    let (_other, refused) = daemon.subscribe(id, "other", "controller");
    assert_eq!(message(&refused), "terminal already has controller ctl");
    let write = daemon.request(json!({"op": "write", "id": id, "attachment_id": null, "data_base64": "eA=="}));
    assert_eq!(message(&write), "terminal input requires the active controller attachment");
    // ...and another attachment claims control from it, after which it is neither controller nor subscribed.
    let claim = daemon.request(json!({"op": "control", "id": id, "attachment_id": "watch", "cols": 80, "rows": 24}));
    assert_eq!(claim, json!({"type": "ok"}));
    let events = frames_until(&mut watcher, &mut seen, "the watcher promoted", |_, events| {
        events.iter().any(|event| event["type"] == "controller_changed")
    });
    let changed = events.iter().find(|event| event["type"] == "controller_changed").unwrap();
    assert_eq!(*changed, json!({"type": "controller_changed", "attachment_id": "watch", "generation": generation + 1}));
    let input = daemon.request(json!({"op": "input", "id": id, "attachment_id": "ctl", "cols": 80, "rows": 24,
        "data_base64": "eA=="}));
    assert_eq!(message(&input), "attachment ctl is not subscribed");
}
