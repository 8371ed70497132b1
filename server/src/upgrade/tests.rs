//! The state's format: a state reads back as it was written, whatever is not a whole state of a format this
//! build reads is refused, the fixture of format 1 still reads (and is still what format 1 writes), and a
//! daemon's worth of terminals costs little to write and read.

use std::time::Instant;

use opencode_pty_vt::Terminal;

use super::encoding::{END, MAGIC, MAX_HEADER_BYTES};
use super::fixture::{self, FORMAT_1, FORMAT_2, SCREEN_BYTES};
use super::state::Build;
use super::*;

fn sample() -> UpgradeState {
    fixture::state(Build::current(), fixture::screen_snapshot())
}

#[test]
fn a_state_reads_back_as_it_was_written() {
    let state = sample();
    let bytes = state.to_bytes().expect("written");
    assert!(bytes.starts_with(&MAGIC) && bytes.ends_with(&END));
    let read = UpgradeState::read_from(&bytes[..]).expect("read");
    assert_eq!(read, state);
    assert_eq!(read.descriptors(), [3, 4, 5, 12, 13, 14], "the daemon's and its processes' descriptors");
}

#[test]
fn what_is_not_a_whole_state_this_build_reads_is_refused() {
    let bytes = sample().to_bytes().expect("written");
    let read = |bytes: &[u8]| UpgradeState::read_from(bytes).map(|_| ()).map_err(|error| error.to_string());
    assert_eq!(read(b"not a state at all"), Err("not an upgrade state".into()));
    let mut other_format = bytes.clone();
    other_format[8..12].copy_from_slice(&99u32.to_le_bytes());
    assert_eq!(read(&other_format), Err("upgrade state format 99 is not one this build reads (1, 2)".into()));
    for cut in [4, 10, 20, 100, bytes.len() - 9, bytes.len() - 1] {
        let error = read(&bytes[..cut]).expect_err("cut short");
        assert!(error.contains("ends early"), "cut at {cut}: {error}");
    }
    let mut longer = bytes.clone();
    longer.push(b'x');
    assert_eq!(read(&longer), Err("the upgrade state is malformed: bytes follow the end marker".into()));
    let mut huge_header = bytes[..12].to_vec();
    huge_header.extend_from_slice(&(MAX_HEADER_BYTES + 1).to_le_bytes());
    assert!(read(&huge_header).expect_err("refused").contains("header is"));
    // A blob over its bound is refused before anything is allocated for it.
    let header = br#"{"build":{"version":"0","protocol":8,"ghostty_revision":"x","ghostty_version":"x"},"daemon":{"next_id":1,"owner":null,"descriptors":{}},"processes":[{"pipe":{"unwritten":99999999999}}]}"#;
    let mut huge_blob = MAGIC.to_vec();
    huge_blob.extend_from_slice(&STATE_FORMAT.to_le_bytes());
    huge_blob.extend_from_slice(&(header.len() as u64).to_le_bytes());
    huge_blob.extend_from_slice(header);
    assert!(read(&huge_blob).expect_err("refused").contains("over 1073741824"));
}

#[test]
fn terminals_from_another_libghostty_are_refused_and_pipe_processes_are_not() {
    let mut build = Build::current();
    build.ghostty_revision = "0000000".into();
    let state = fixture::state(build, fixture::screen_snapshot());
    let bytes = state.to_bytes().expect("written");
    let error = UpgradeState::read_from(&bytes[..]).expect_err("refused");
    assert!(matches!(error, UpgradeError::VtRevision { .. }), "{error}");
    assert!(error.to_string().contains("captured with Ghostty 0000000"), "{error}");
    assert_eq!(UpgradeState::decode(&bytes[..]).expect("decodes").processes.len(), 2);
    let pipes_only = UpgradeState { processes: state.processes[1..].to_vec(), ..state };
    UpgradeState::read_from(&pipes_only.to_bytes().expect("written")[..]).expect("no emulator to read");
}

/// The fixture of format 1, which a build of format 1 wrote (it is never written again): it still reads.
#[test]
fn the_fixture_of_format_1_reads() {
    let bytes = std::fs::read(FORMAT_1).expect("the fixture of format 1");
    assert_eq!(bytes[8..12], 1u32.to_le_bytes(), "format 1");
    let state = UpgradeState::decode(&bytes[..]).expect("format 1 reads");
    let ProcessState::Pty(terminal) = &state.processes[0] else { panic!("a terminal first") };
    let expected = fixture::state(state.build.clone(), terminal.vt_snapshot.0.clone());
    // Read into today's types, with the members format 2 added absent.
    assert_eq!(state, expected, "every member of format 1");
    // Its emulator reads with the revision that made it (any other one refuses the state).
    if state.build.ghostty_revision == opencode_pty_vt::ffi::GHOSTTY_REVISION {
        UpgradeState::read_from(&bytes[..]).expect("this build takes it");
        let mut vt = Terminal::from_snapshot(&terminal.vt_snapshot.0, 100).expect("the emulator");
        let mut fed = Terminal::new(20, 5, 100).expect("terminal");
        fed.write(SCREEN_BYTES);
        for vt in [&mut vt, &mut fed] {
            vt.write(b"1mX");
        }
        assert_eq!(vt.plain_text().unwrap(), fed.plain_text().unwrap());
        assert_eq!(vt.title().as_deref(), Some("fixture"));
    } else {
        assert!(matches!(UpgradeState::read_from(&bytes[..]), Err(UpgradeError::VtRevision { .. })));
    }
}

/// Writes the fixture of format 2 (`UPDATE_UPGRADE_FIXTURE=2`), which is only ever done for a new format: the
/// fixture of a format, once committed, never changes.
#[test]
fn the_fixture_of_format_2_reads_and_is_what_this_build_writes() {
    let sample_2 = || fixture::state_2(Build::current(), fixture::screen_snapshot());
    if std::env::var_os("UPDATE_UPGRADE_FIXTURE").is_some_and(|format| format == "2") {
        std::fs::write(FORMAT_2, sample_2().to_bytes().expect("written")).expect("fixture written");
    }
    let bytes = std::fs::read(FORMAT_2).expect("the fixture of format 2");
    assert_eq!(bytes[8..12], 2u32.to_le_bytes(), "format 2");
    let state = UpgradeState::decode(&bytes[..]).expect("format 2 reads");
    let ProcessState::Pty(terminal) = &state.processes[0] else { panic!("a terminal first") };
    let expected = fixture::state_2(state.build.clone(), terminal.vt_snapshot.0.clone());
    assert_eq!(state, expected, "every member of format 2");
    let ProcessState::Pty(filed) = &state.processes[1] else { panic!("a terminal second") };
    assert_eq!(filed.ring_tail(), 800);
    assert!(filed.has_snapshot());
    assert!(state.descriptors().contains(&16), "the screen file is passed on");
    // This build writes exactly this: a change to the types without a new format number fails here.
    assert_eq!(expected.to_bytes().expect("written"), bytes, "the format changed: give it a new number");
}

/// A hundred terminals with full 2 MiB replay rings (the default) and their emulators: the state is written
/// and read in about the time it takes to copy it, far from the JSON and base64 alternative.
#[test]
fn a_hundred_full_terminals_cost_about_a_copy() {
    const TERMINALS: usize = 100;
    const RING: usize = 2 * 1024 * 1024;
    let template = sample();
    let ProcessState::Pty(terminal) = &template.processes[0] else { panic!("a terminal first") };
    let processes = (0..TERMINALS)
        .map(|n| {
            let mut terminal = terminal.clone();
            terminal.id = n as u64 + 1;
            terminal.replay = ReplayState { capacity: RING, head: 0, bytes: Blob(vec![b'a' + (n % 26) as u8; RING]) };
            ProcessState::Pty(terminal)
        })
        .collect();
    let state = UpgradeState { processes, ..template };
    let started = Instant::now();
    let bytes = state.to_bytes().expect("written");
    let written = started.elapsed();
    let started = Instant::now();
    let read = UpgradeState::read_from(&bytes[..]).expect("read");
    let took = started.elapsed();
    println!(
        "{TERMINALS} terminals, {} MiB: written in {written:?}, read in {took:?} (header {} bytes)",
        bytes.len() >> 20,
        serde_json::to_vec(&state).expect("header").len()
    );
    assert_eq!(read.processes.len(), TERMINALS);
    assert_eq!(read, state);
    // Generous for a debug build on a loaded machine: the point is no per-byte encoding.
    assert!(written.as_secs() < 20 && took.as_secs() < 20, "written in {written:?}, read in {took:?}");
}
