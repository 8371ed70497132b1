//! An in-place upgrade of a terminal whose history and replay ring are compressed (issue 31, SPEC D18): the
//! screen file is written from the compressed ring and history, and the new image shows the same screen and
//! replays the same bytes.

use serde_json::json;

use super::screen::{Screen, assert_same_screen};
use super::{create, private_copy, upgrade};
use crate::support::{Daemon, anon_rss_kib, eventually};

#[test]
fn a_compressed_terminal_is_upgraded_with_its_screen_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let program = private_copy(dir.path());
    let daemon = Daemon::start_with(&["--compress-after-ms", "200"]);
    let mut owner = daemon.own();
    let baseline = anon_rss_kib(daemon.pid());
    let (id, _pid) = create(&daemon, "seq -f 'line %g of a history to compress' 1 30000; echo END; exec sleep 600");
    // Each line and `END`, with the terminal's CRLF.
    let printed: u64 =
        (1..=30_000u64).map(|n| format!("line {n} of a history to compress\r\n").len() as u64).sum::<u64>() + 5;
    eventually("the terminal prints everything", || {
        let got = daemon.request(json!({"op": "get", "id": id}));
        (got["process"]["output_tail"].as_u64() == Some(printed)).then_some(())
    });
    let full = anon_rss_kib(daemon.pid());
    // The snapshot reads the history (restoring what was compressed); the quiet after it compresses again.
    let before = Screen::of(&daemon, id);
    eventually("the quiet terminal is compressed", || {
        (anon_rss_kib(daemon.pid()) < baseline + (full - baseline) / 3).then_some(())
    });
    let replay_before = daemon.request(json!({"op": "replay", "id": id, "offset": 0}));
    assert_eq!(replay_before["end_offset"].as_u64(), Some(printed), "{}", &replay_before.to_string()[..200]);

    let answer = upgrade(&daemon, &mut owner, Some(&program));
    assert_eq!(answer["type"], "ok", "{answer}");
    let replay_after = daemon.request(json!({"op": "replay", "id": id, "offset": 0}));
    assert_eq!(replay_after, replay_before, "the replay across the upgrade");
    assert_same_screen(&before, &Screen::of(&daemon, id));
    daemon.request(json!({"op": "terminate", "id": id}));
}
