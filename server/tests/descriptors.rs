//! No child inherits another process's descriptors: PTYs and pipe processes are started concurrently from
//! six threads each, and every pipe child lists its open descriptors, which must show no terminal at all. (With
//! `openpty` followed by `FD_CLOEXEC`, this caught a pipe child holding `/dev/ptmx`.) Its own test binary: its
//! twelve threads keep both cores of a small machine busy for seconds, which would starve the timing of the
//! tests beside it in `tests/inprocess/`.

mod support;

use opencode_pty_protocol::Response;
use support::{exited_pipe, pipe_spec, service, sh};

const ROUNDS: usize = 100;

#[test]
fn children_started_concurrently_never_inherit_a_terminal() {
    let service = service();
    let dir = tempfile::tempdir().unwrap();
    let ids = std::thread::scope(|scope| {
        for _ in 0..6 {
            scope.spawn(|| {
                for _ in 0..ROUNDS {
                    let info = service.create_pty(sh("exit 0")).expect("create_pty");
                    service.terminate(info.id).expect("terminate");
                }
            });
        }
        let listers: Vec<_> = (0..6)
            .map(|thread| {
                let (service, dir) = (&service, dir.path());
                scope.spawn(move || {
                    let ids: Vec<u64> = (0..ROUNDS)
                        .map(|round| {
                            let mut spec = pipe_spec(dir, "/bin/ls", &["-l", "/proc/self/fd"]);
                            spec.output_path = dir.join(format!("fds-{thread}-{round}.log"));
                            service.create_pipe(spec).expect("create_pipe").id
                        })
                        .collect();
                    ids
                })
            })
            .collect();
        listers.into_iter().flat_map(|lister| lister.join().expect("a listing thread panicked")).collect::<Vec<u64>>()
    });
    // Each listing is complete once its process has exited: waited for, not polled.
    for id in ids {
        let exited = exited_pipe(&service.pipe(id).expect("a listed process"));
        assert!(matches!(exited, Response::Exited { exit_code: Some(0), .. }), "{exited:?}");
    }
    let mut listings = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains("ptmx") && !text.contains("/dev/pts"), "a pipe child inherited a terminal:\n{text}");
        listings += 1;
    }
    assert_eq!(listings, 6 * ROUNDS);
}
