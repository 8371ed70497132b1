//! `list` with many terminals, against the real binary (issue 31): the terminals' listing budget (SPEC B5)
//! admits terminals until it is full, whatever the pipe processes took, and `list` never fails, with every
//! title at its longest; a paged `list` (SPEC D17) returns every process exactly once, in creation order, even
//! while processes come and go. The daemon's budget is made small (`--pty-listing-bytes`) so that a few dozen
//! shells stand for the thousand of a real one.

use crate::support;

use opencode_pty_protocol::{MAX_FRAME_BYTES, MAX_TITLE_CHARS};
use serde_json::{Value, json};
use support::{Daemon, create_sh, frames_until, message, send};

/// The terminals' listing budget of these tests' daemons: about fifteen terminals whose titles may grow to
/// their longest.
const BUDGET: usize = 64 * 1024;

/// What one of these terminals can take in `list` at most: the daemon's overhead, its strings, two titles of
/// 256 control characters (six JSON bytes each). The daemon reserves exactly this much (SPEC B5).
fn most_per_terminal() -> usize {
    let command = serde_json::to_string(&json!(["sh", "-c", SCRIPT])).unwrap().len();
    opencode_pty::limits::PROCESS_INFO_OVERHEAD_BYTES + command + r#""/""g""#.len() + 2 * (2 + 6 * MAX_TITLE_CHARS)
}

/// Each terminal waits for a line, then sets the longest title a program can give as JSON (256 four-byte
/// characters), then waits.
const SCRIPT: &str = r#"read go; printf '\033]2;%s\007' "$(printf '😀%.0s' $(seq 256))"; exec sleep 600"#;

/// A daemon with the small budget, owned.
fn small_daemon() -> (Daemon, std::os::unix::net::UnixStream) {
    let daemon = Daemon::start_with(&["--pty-listing-bytes", &BUDGET.to_string()]);
    let owner = daemon.own();
    (daemon, owner)
}

/// The id of a `created` answer (panics on anything else).
fn created_id(answer: &Value) -> u64 {
    answer["process"]["id"].as_u64().unwrap_or_else(|| panic!("not created: {answer}"))
}

/// `list` of one mode with extra members; the answer and its size as JSON.
fn list(daemon: &Daemon, mode: &str, extra: Value) -> (Value, usize) {
    let mut request = json!({"op": "list", "mode": mode});
    request.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
    let answer = daemon.request(request);
    assert_eq!(answer["type"], "processes", "{answer}");
    let len = serde_json::to_vec(&answer).unwrap().len();
    (answer, len)
}

/// The ids of a `processes` answer, in order.
fn ids(answer: &Value) -> Vec<u64> {
    answer["processes"].as_array().expect("processes").iter().map(|p| p["id"].as_u64().expect("id")).collect()
}

/// Every process of `mode` through pages of `limit`, following `next`; the ids of each page.
fn pages(daemon: &Daemon, mode: &str, limit: u64) -> Vec<Vec<u64>> {
    let mut pages = Vec::new();
    let mut after: Option<u64> = None;
    loop {
        let extra = match after {
            Some(after) => json!({"after": after, "limit": limit}),
            None => json!({"limit": limit}),
        };
        let (answer, _) = list(daemon, mode, extra);
        let page = ids(&answer);
        assert!(page.len() as u64 <= limit, "a page of {limit} held {}: {answer}", page.len());
        match answer["next"].as_u64() {
            Some(next) => {
                assert_eq!(page.last(), Some(&next), "next is the page's last id");
                after = Some(next);
                pages.push(page);
            }
            None => {
                assert!(answer.get("next").is_none(), "left out, not null: {answer}");
                pages.push(page);
                return pages;
            }
        }
        assert!(pages.len() < 1000, "the pages never ended");
    }
}

#[test]
fn terminals_fill_their_own_budget_and_list_never_fails_with_every_title_at_its_longest() {
    let (daemon, _owner) = small_daemon();
    let dir = tempfile::tempdir().expect("tempdir");
    // Pipe processes first: they have a budget of their own and take nothing from the terminals'.
    for n in 0..8 {
        let pipe = json!({"op": "create_pipe", "program": "/bin/sleep", "args": ["600"], "cwd": "/", "env": {},
                          "group_id": "g", "output_path": dir.path().join(format!("{n}.log"))});
        created_id(&daemon.request(pipe));
    }
    let mut terminals = Vec::new();
    let refusal = loop {
        let answer = daemon.request(create_sh(SCRIPT));
        match answer["process"]["id"].as_u64() {
            Some(id) => terminals.push(id),
            None => break answer,
        }
        assert!(terminals.len() < 100, "the budget never refused a terminal");
    };
    let refused = message(&refusal);
    assert!(refused.starts_with("the daemon's live processes would take"), "{refused}");
    assert!(refused.ends_with(&format!("over the {BUDGET}-byte total")), "{refused}");
    assert_eq!(terminals.len(), BUDGET / most_per_terminal(), "as many as the budget holds at the worst");
    // Every program sets the longest title it can; every other terminal is renamed to the longest user title
    // as JSON too (then both `title` and `user_title` are at their longest).
    let renamed = "\u{1}".repeat(MAX_TITLE_CHARS);
    for (n, &id) in terminals.iter().enumerate() {
        let (mut stream, attached) = daemon.subscribe(id, "c", "controller");
        assert_eq!(attached["type"], "attached", "{attached}");
        let write = json!({"op": "write", "id": id, "attachment_id": "c", "data_base64": "Z28K"});
        assert_eq!(daemon.request(write)["type"], "ok");
        let mut output = Vec::new();
        frames_until(&mut stream, &mut output, "the program's title", |_, events| {
            events.iter().any(|e| e["type"] == "title_changed")
        });
        if n % 2 == 1 {
            assert_eq!(daemon.request(json!({"op": "rename", "id": id, "title": renamed}))["type"], "ok");
        }
    }
    let (all, len) = list(&daemon, "pty", json!({}));
    assert_eq!(ids(&all), terminals, "every terminal, in creation order");
    assert!(all.get("next").is_none(), "a list without a page says no next: {all}");
    let titles: Vec<&str> =
        all["processes"].as_array().unwrap().iter().map(|p| p["pty"]["title"].as_str().unwrap()).collect();
    assert_eq!(titles[0].chars().count(), MAX_TITLE_CHARS, "the program's title, whole");
    assert_eq!(titles[1], renamed);
    // The answer stays within what the terminals reserved, so within one frame whatever the budget.
    assert!(len <= BUDGET, "{len} bytes of list against a {BUDGET}-byte budget");
    assert!(len <= MAX_FRAME_BYTES);
    // A terminal that ends gives its share back: one more fits.
    assert_eq!(daemon.request(json!({"op": "terminate", "id": terminals[0]}))["type"], "ok");
    let another = created_id(&daemon.request(create_sh(SCRIPT)));
    assert!(another > *terminals.last().unwrap());
    assert_eq!(pages(&daemon, "pipe", 3).concat().len(), 8, "the pipe processes are all there too");
}

#[test]
fn pages_return_every_process_exactly_once_in_creation_order() {
    let (daemon, _owner) = small_daemon();
    let mut terminals: Vec<u64> = (0..7).map(|_| created_id(&daemon.request(create_sh("read x")))).collect();
    let (all, _) = list(&daemon, "pty", json!({}));
    assert_eq!(ids(&all), terminals);
    for limit in [1, 2, 3, 7, 8, 1000] {
        let pages = pages(&daemon, "pty", limit);
        assert_eq!(pages.concat(), terminals, "pages of {limit}");
        assert_eq!(pages.len() as u64, (terminals.len() as u64).div_ceil(limit).max(1), "pages of {limit}");
    }
    // `after` alone: every process after it, and no next.
    let (rest, _) = list(&daemon, "pty", json!({"after": terminals[4]}));
    assert_eq!(ids(&rest), terminals[5..]);
    assert!(rest.get("next").is_none());
    // After the last one, or of a mode without processes: an empty last page.
    let (empty, _) = list(&daemon, "pty", json!({"after": terminals[6], "limit": 2}));
    assert_eq!((ids(&empty), empty.get("next")), (vec![], None));
    assert_eq!(pages(&daemon, "pipe", 2), vec![Vec::<u64>::new()]);
    // While processes come and go between pages, none comes twice and those that stayed all come.
    let (first, _) = list(&daemon, "pty", json!({"limit": 3}));
    let gone = terminals.remove(3);
    assert_eq!(daemon.request(json!({"op": "terminate", "id": gone}))["type"], "ok");
    let newcomer = created_id(&daemon.request(create_sh("read x")));
    terminals.push(newcomer);
    let mut seen = ids(&first);
    let mut after = first["next"].as_u64().expect("more follow");
    loop {
        let (page, _) = list(&daemon, "pty", json!({"after": after, "limit": 3}));
        seen.extend(ids(&page));
        match page["next"].as_u64() {
            Some(next) => after = next,
            None => break,
        }
    }
    assert_eq!(seen, terminals, "each once, in creation order, the newcomer last");
    // A limit of 0 is refused when the request is decoded; the daemon goes on.
    let mut stream = daemon.connect();
    send(&mut stream, &daemon.envelope(json!({"op": "list", "mode": "pty", "limit": 0})));
    let refused = support::recv(&mut stream).expect("an answer");
    assert!(message(&refused).starts_with("invalid list request: "), "{refused}");
    assert_eq!(ids(&list(&daemon, "pty", json!({})).0), terminals);
}
