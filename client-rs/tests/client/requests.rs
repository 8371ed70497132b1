//! One-shot requests: the exact envelope on the wire, typed answers, and each way an answer can go wrong.

use std::num::NonZeroU16;
use std::time::Duration;

use opencode_pty_client::{ClientError, CreatePty, InputWait, Mode, OptIn, Response, Signal};
use serde_json::json;

use crate::fake::{FakeDaemon, TOKEN, bounded, exited, pty_process};

#[tokio::test]
async fn a_request_sends_the_exact_envelope_and_parses_the_answer() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let answer = json!({"type": "process", "process": pty_process(7)});
        let (process, envelope) = tokio::join!(client.get(7), daemon.answer(answer));
        assert_eq!(envelope, json!({"token": TOKEN, "request": {"op": "get", "id": 7}}));
        let process = process.expect("process");
        assert_eq!(process.id, 7);
        assert_eq!(process.mode, Mode::Pty);
    })
    .await;
}

#[tokio::test]
async fn typed_requests_put_their_fields_on_the_wire() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let ok = json!({"type": "ok"});
        let size = |n| NonZeroU16::new(n).expect("nonzero");

        let created = json!({"type": "created", "process": pty_process(1)});
        let (process, envelope) = tokio::join!(client.create_pty(CreatePty::new("sh", "/tmp")), daemon.answer(created));
        assert_eq!(process.expect("created").id, 1);
        let expected = json!({"op": "create_pty", "program": "sh", "args": [], "cwd": "/tmp", "env": {},
                              "group_id": "", "title": "sh", "cols": 80, "rows": 24});
        assert_eq!(envelope["request"], expected);

        let (result, envelope) = tokio::join!(client.write(1, None, b"hi\n"), daemon.answer(ok.clone()));
        result.expect("write");
        assert_eq!(envelope["request"], json!({"op": "write", "id": 1, "attachment_id": null, "data_base64": "aGkK"}));

        let (result, envelope) =
            tokio::join!(client.input(1, "tab", size(100), size(30), b""), daemon.answer(ok.clone()));
        result.expect("input");
        assert_eq!(
            envelope["request"],
            json!({"op": "input", "id": 1, "attachment_id": "tab", "cols": 100, "rows": 30, "data_base64": ""})
        );

        let (result, envelope) = tokio::join!(client.rename(1, None), daemon.answer(ok.clone()));
        result.expect("rename");
        assert_eq!(envelope["request"], json!({"op": "rename", "id": 1, "title": null}));

        let (result, envelope) = tokio::join!(client.signal(2, Signal::Sigint), daemon.answer(ok));
        result.expect("signal");
        assert_eq!(envelope["request"], json!({"op": "signal", "id": 2, "signal": "SIGINT"}));

        let rows =
            json!({"type": "rows", "process": pty_process(1), "lines": ["$ ", ""], "cursor_x": 2, "cursor_y": 0});
        let (result, envelope) = tokio::join!(client.read_rows(1, None), daemon.answer(rows));
        assert_eq!(result.expect("rows").lines, ["$ ", ""]);
        assert_eq!(envelope["request"], json!({"op": "read_rows", "id": 1}), "a default row count is left out");
    })
    .await;
}

#[tokio::test]
async fn shell_integration_and_commands_go_on_the_wire_and_come_back_typed() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let created = json!({"type": "created", "process": pty_process(3)});
        let params = CreatePty { shell_integration: Some(true), ..CreatePty::new("bash", "/tmp") };
        let (process, envelope) = tokio::join!(client.create_pty(params), daemon.answer(created));
        assert_eq!(process.expect("created").id, 3);
        assert_eq!(envelope["request"]["shell_integration"], true);

        let command = json!({"command_id": 1, "command": "make", "cwd": "/tmp", "output_start": 10, "output_end": 20,
                             "exit_code": 2, "started_at": 1, "finished_at": 2});
        let answer = json!({"type": "commands", "process": pty_process(3), "commands": [command]});
        let limit = NonZeroU16::new(5);
        let (commands, envelope) = tokio::join!(client.commands(3, limit), daemon.answer(answer));
        assert_eq!(envelope["request"], json!({"op": "commands", "id": 3, "limit": 5}));
        let commands = commands.expect("commands").commands;
        assert_eq!(
            (commands[0].command.as_str(), commands[0].exit_code, commands[0].output_end),
            ("make", Some(2), Some(20))
        );
    })
    .await;
}

#[tokio::test]
async fn base64_members_are_decoded() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let answer = json!({"type": "replay", "requested_offset": 0, "available_offset": 3, "end_offset": 8,
                            "truncated": true, "data_base64": "aGVsbG8="});
        let (replay, envelope) = tokio::join!(client.replay(4, 0), daemon.answer(answer));
        assert_eq!(envelope["request"], json!({"op": "replay", "id": 4, "offset": 0}));
        let replay = replay.expect("replay");
        assert_eq!((replay.available_offset, replay.end_offset, replay.truncated), (3, 8, true));
        assert_eq!(replay.bytes, b"hello");

        let answer = json!({"type": "snapshot", "process": pty_process(4), "text": "$", "checkpoint_base64": "G1sy",
                            "cursor_x": 1, "cursor_y": 0});
        let (snapshot, _) = tokio::join!(client.snapshot(4), daemon.answer(answer));
        assert_eq!(snapshot.expect("snapshot").checkpoint, b"\x1b[2");

        let answer = json!({"type": "snapshot", "process": pty_process(4), "text": "", "checkpoint_base64": "!!",
                            "cursor_x": 0, "cursor_y": 0});
        let (snapshot, _) = tokio::join!(client.snapshot(4), daemon.answer(answer));
        assert!(matches!(snapshot, Err(ClientError::Protocol(_))), "{snapshot:?}");
    })
    .await;
}

#[tokio::test]
async fn an_error_response_is_a_daemon_error() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let answer = json!({"type": "error", "message": "process 9 not found"});
        let (result, _) = tokio::join!(client.terminate(9), daemon.answer(answer));
        let error = result.unwrap_err();
        assert!(matches!(&error, ClientError::Daemon { message } if message == "process 9 not found"));
        assert_eq!(error.to_string(), "process 9 not found");
    })
    .await;
}

#[tokio::test]
async fn a_response_of_the_wrong_type_is_unexpected() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let (result, _) = tokio::join!(client.list(Mode::Pipe), daemon.answer(json!({"type": "ok"})));
        let error = result.unwrap_err();
        assert!(matches!(&error, ClientError::Unexpected { expected: "processes", got } if got == "ok"), "{error:?}");
    })
    .await;
}

#[tokio::test]
async fn eof_before_the_response_is_closed() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let (result, ()) = tokio::join!(client.shutdown(), daemon.close_after_reading());
        assert!(matches!(result, Err(ClientError::Closed)), "{result:?}");
    })
    .await;
}

#[tokio::test]
async fn raw_requests_return_errors_as_values() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let answer = json!({"type": "error", "message": "unsupported request: teleport"});
        let (response, envelope) =
            tokio::join!(client.send_raw(json!({"op": "teleport", "to": 3})), daemon.answer(answer));
        assert_eq!(envelope, json!({"token": TOKEN, "request": {"op": "teleport", "to": 3}}));
        assert_eq!(response.expect("answered"), Response::Error { message: "unsupported request: teleport".into() });

        let (response, envelope) =
            tokio::join!(client.request(opencode_pty_client::Request::Shutdown), daemon.answer(json!({"type": "ok"})));
        assert_eq!(envelope["request"], json!({"op": "shutdown"}));
        assert_eq!(response.expect("answered"), Response::Ok);
    })
    .await;
}

#[tokio::test]
async fn a_silent_daemon_times_out() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client().with_request_timeout(Duration::from_millis(50));
        let stay_silent = async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            // The client gives up and closes; only then does this side end.
            peer.expect_eof().await;
        };
        let (result, ()) = tokio::join!(client.ping(), stay_silent);
        assert!(matches!(&result, Err(ClientError::Timeout { what, .. }) if what == "ping request"), "{result:?}");
    })
    .await;
}

#[tokio::test]
async fn wait_outlasts_the_request_timeout() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client().with_request_timeout(Duration::from_millis(50));
        let (exited, ()) = tokio::join!(client.wait(3), async {
            let mut waiter = daemon.accept().await;
            assert_eq!(waiter.read_envelope().await["request"], json!({"op": "wait", "id": 3}));
            // A request bounded by the same timeout expires first; the wait must still be waiting.
            let stay_silent = async {
                let mut peer = daemon.accept().await;
                peer.read_envelope().await;
                peer.expect_eof().await;
            };
            let (ping, ()) = tokio::join!(client.ping(), stay_silent);
            assert!(matches!(ping, Err(ClientError::Timeout { .. })), "{ping:?}");
            waiter.send_json(&exited(12)).await;
        });
        assert_eq!(exited.expect("exited").final_offset, 12);
    })
    .await;
}

#[tokio::test]
async fn cancelling_wait_closes_its_connection() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let received = async {
            let mut peer = daemon.accept().await;
            peer.read_envelope().await;
            peer
        };
        let mut peer = tokio::select! {
            result = client.wait(5) => panic!("nothing answered, yet wait returned {result:?}"),
            peer = received => peer,
        };
        // The wait future was dropped when `select!` finished.
        peer.expect_eof().await;
    })
    .await;
}

#[tokio::test]
async fn set_metadata_sends_the_whole_object_and_maps_ok() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let metadata = json!({"label": "build", "nested": {"n": [1, 2]}, "empty": null});
        let serde_json::Value::Object(map) = metadata.clone() else { unreachable!() };
        let (result, envelope) = tokio::join!(client.set_metadata(3, map), daemon.answer(json!({"type": "ok"})));
        result.expect("set_metadata");
        assert_eq!(envelope, json!({"token": TOKEN, "request": {"op": "set_metadata", "id": 3, "metadata": metadata}}));

        // Any answer but `ok` is an error, so a refusal is never taken for success.
        let refusal =
            json!({"type": "error", "message": "process 3 is a PTY; this request is only for pipe processes"});
        let (result, _) = tokio::join!(client.set_metadata(3, serde_json::Map::new()), daemon.answer(refusal));
        assert!(
            matches!(&result, Err(ClientError::Daemon { message }) if message.starts_with("process 3 is a PTY")),
            "{result:?}"
        );
        let pong = json!({"type": "pong", "instance_id": "x", "pid": 1, "protocol": 8, "features": []});
        let (result, envelope) = tokio::join!(client.set_metadata(4, serde_json::Map::new()), daemon.answer(pong));
        assert_eq!(envelope["request"], json!({"op": "set_metadata", "id": 4, "metadata": {}}));
        assert!(matches!(&result, Err(ClientError::Unexpected { expected: "ok", .. })), "{result:?}");
    })
    .await;
}

#[tokio::test]
async fn features_go_on_the_wire_only_when_named_and_their_members_decode() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let mut waiting = pty_process(7);
        waiting["pty"]["input"] = json!("password");
        waiting["pty"]["alternate_screen"] = json!(false);
        let answer = json!({"type": "process", "process": waiting});
        let (process, envelope) = tokio::join!(client.get_with(7, &[OptIn::Input]), daemon.answer(answer));
        assert_eq!(envelope["request"], json!({"op": "get", "id": 7, "features": ["input"]}));
        let pty = process.expect("process").pty.expect("a terminal");
        assert_eq!((pty.input, pty.alternate_screen), (Some(Some(InputWait::Password)), Some(false)));

        let mut idle = pty_process(7);
        idle["pty"]["input"] = json!(null);
        idle["pty"]["alternate_screen"] = json!(true);
        let answer = json!({"type": "processes", "processes": [idle]});
        let (processes, envelope) = tokio::join!(client.list_with(Mode::Pty, &[OptIn::Input]), daemon.answer(answer));
        assert_eq!(envelope["request"], json!({"op": "list", "mode": "pty", "features": ["input"]}));
        let pty = processes.expect("processes").remove(0).pty.expect("a terminal");
        assert_eq!((pty.input, pty.alternate_screen), (Some(None), Some(true)), "null is present, not left out");

        // Without features: the request of protocol 8, and an answer without the members.
        let answer = json!({"type": "processes", "processes": [pty_process(7)]});
        let (processes, envelope) = tokio::join!(client.list_with(Mode::Pty, &[]), daemon.answer(answer));
        assert_eq!(envelope["request"], json!({"op": "list", "mode": "pty"}));
        let pty = processes.expect("processes").remove(0).pty.expect("a terminal");
        assert_eq!((pty.input, pty.alternate_screen), (None, None));
    })
    .await;
}

#[tokio::test]
async fn list_all_follows_next_page_by_page_and_stops_at_the_last() {
    bounded(async {
        let daemon = FakeDaemon::start();
        let client = daemon.client();
        let page = std::num::NonZeroU32::new(2).expect("nonzero");
        let pages = async {
            let first = json!({"type": "processes", "processes": [pty_process(1), pty_process(3)], "next": 3});
            let second = json!({"type": "processes", "processes": [pty_process(4), pty_process(9)], "next": 9});
            let last = json!({"type": "processes", "processes": [pty_process(12)]});
            let mut asked = Vec::new();
            for answer in [first, second, last] {
                asked.push(daemon.answer(answer).await["request"].clone());
            }
            asked
        };
        let (all, asked) = tokio::join!(client.list_all(Mode::Pty, page), pages);
        let ids: Vec<u64> = all.expect("every page").iter().map(|p| p.id).collect();
        assert_eq!(ids, [1, 3, 4, 9, 12]);
        assert_eq!(asked[0], json!({"op": "list", "mode": "pty", "limit": 2}), "the first page has no after");
        assert_eq!(asked[1], json!({"op": "list", "mode": "pty", "limit": 2, "after": 3}));
        assert_eq!(asked[2], json!({"op": "list", "mode": "pty", "limit": 2, "after": 9}));

        // A daemon without pages answers every process without `next`: one answer is all.
        let every = json!({"type": "processes", "processes": [pty_process(1), pty_process(2), pty_process(5)]});
        let (all, _) = tokio::join!(client.list_all(Mode::Pty, page), daemon.answer(every));
        assert_eq!(all.expect("one answer").len(), 3);

        // A `next` that does not move on is the daemon's fault, not a reason to ask for ever.
        let stuck = async {
            let first = json!({"type": "processes", "processes": [pty_process(4)], "next": 4});
            daemon.answer(first.clone()).await;
            daemon.answer(first).await;
        };
        let (stuck_list, _) = tokio::join!(client.list_all(Mode::Pty, page), stuck);
        assert!(matches!(stuck_list, Err(ClientError::Protocol(_))), "{stuck_list:?}");
    })
    .await;
}
