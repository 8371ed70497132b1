//! Every fuzz target's body over its seeds, its committed regressions (`fuzz/regressions/<target>/`: each a
//! crash once found) and, when present, the local corpus `cargo fuzz` grew (`fuzz/corpus/<target>/`): on
//! stable, in the test command, so no target rots and no crash comes back.

use std::path::{Path, PathBuf};

use opencode_pty_hardening::fuzz;
use opencode_pty_hardening::seeds::{TARGETS, seeds};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn body(target: &str) -> fn(&[u8]) {
    match target {
        "frame_decoder" => fuzz::frame_decoder,
        "request_decoder" => fuzz::request_decoder,
        "registration" => fuzz::registration,
        "checkpoint" => fuzz::checkpoint,
        other => panic!("no body for {other}"),
    }
}

/// The files of `dir`, if it exists.
fn inputs(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.is_file())
        .map(|path| {
            let bytes = std::fs::read(&path).expect("readable");
            (path, bytes)
        })
        .collect()
}

#[test]
fn every_target_runs_its_seeds_regressions_and_local_corpus() {
    for target in TARGETS {
        let run = body(target);
        let seeds = seeds(target, &root().join("schema"));
        assert!(seeds.len() >= 5, "{target} has seeds ({})", seeds.len());
        for seed in &seeds {
            run(seed);
        }
        for kind in ["regressions", "corpus"] {
            for (path, bytes) in inputs(&root().join("fuzz").join(kind).join(target)) {
                eprintln!("{target}: {}", path.display());
                run(&bytes);
            }
        }
    }
}
