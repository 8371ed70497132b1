//! No child inherits another process's descriptors: PTYs and pipe processes are started concurrently from
//! six threads each, and every pipe child lists its open descriptors, which must show no terminal at all. (With
//! `openpty` followed by `FD_CLOEXEC`, this caught a pipe child holding `/dev/ptmx`.)

mod support;

use std::time::{Duration, Instant};

use opencode_pty_protocol::{Lifecycle, Mode};
use support::{WAIT, pipe_spec, service, sh};

const ROUNDS: usize = 100;

#[test]
fn children_started_concurrently_never_inherit_a_terminal() {
    let service = service();
    let dir = tempfile::tempdir().unwrap();
    std::thread::scope(|scope| {
        for _ in 0..6 {
            scope.spawn(|| {
                for _ in 0..ROUNDS {
                    let info = service.create_pty(sh("exit 0")).expect("create_pty");
                    service.terminate(info.id).expect("terminate");
                }
            });
        }
        for thread in 0..6 {
            let (service, dir) = (&service, dir.path());
            scope.spawn(move || {
                for round in 0..ROUNDS {
                    let mut spec = pipe_spec(dir, "/bin/ls", &["-l", "/proc/self/fd"]);
                    spec.output_path = dir.join(format!("fds-{thread}-{round}.log"));
                    service.create_pipe(spec).expect("create_pipe");
                }
            });
        }
    });
    let deadline = Instant::now() + WAIT;
    while service.list(Mode::Pipe).iter().any(|p| p.lifecycle == Lifecycle::Running) {
        assert!(Instant::now() < deadline, "the listings did not finish");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut listings = 0;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains("ptmx") && !text.contains("/dev/pts"), "a pipe child inherited a terminal:\n{text}");
        listings += 1;
    }
    assert_eq!(listings, 6 * ROUNDS);
}
