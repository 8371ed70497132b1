//! The handover for real: this test binary executes itself through it, and the image that follows checks
//! what it was passed; and a handover whose `execve` fails leaves every descriptor as it was.

use std::fs;
use std::io::{Read as _, Write as _};
use std::os::fd::AsFd as _;
use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;

use nix::fcntl::{FcntlArg, FdFlag, OFlag, SealFlag, fcntl};

use super::*;
use crate::upgrade::envelope::{Handed, STATE_FORMAT, STATE_MEMFD_NAME, open};
use crate::upgrade::inherited::{AdoptError, adopt, check};

/// Set by the outer test: only then does [`exec_child`] do anything.
const PROBE_ENV: &str = "OPENCODE_PTY_EXEC_PROBE";

/// This file's child test, by its full name in the library's test binary.
const CHILD_TEST: &str = "upgrade::exec::tests::exec_child";

/// What the child hands over.
const PAYLOAD: &[u8] = b"four terminals, one pipe process, and an owner";

/// What the child writes into the kept pipe before the exec.
const IN_THE_PIPE: &[u8] = b"written before the exec";

/// The libtest arguments that run [`exec_child`] alone, then `extra` (which names no test, so runs none).
fn child_args(extra: &[String]) -> Vec<OsString> {
    let mut args: Vec<OsString> =
        vec![CHILD_TEST.into(), "--exact".into(), "--nocapture".into(), "--test-threads=1".into()];
    args.extend(extra.iter().map(OsString::from));
    args
}

#[test]
fn an_exec_keeps_the_pid_the_state_and_exactly_the_kept_descriptors() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(&exe).args(child_args(&[])).env(PROBE_ENV, "1").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the child failed: {}\n{stdout}\n{stderr}", out.status);
    let pid_after = |said: &str| {
        let start = stdout.find(said).unwrap_or_else(|| panic!("no {said:?} in {stdout}")) + said.len();
        stdout[start..].split_whitespace().next().and_then(|pid| pid.parse::<u32>().ok()).expect(&stdout)
    };
    assert_eq!(pid_after("before the exec: pid "), pid_after("after the exec: pid "), "{stdout}");
    assert!(stdout.contains("the state, the kept pipe and the old executable arrived"), "{stdout}");
}

/// Does nothing in an ordinary run. Under [`PROBE_ENV`]: hands over to this same binary (first run), or
/// checks what arrived (the run the exec started, told by a `resumed:` argument).
#[test]
fn exec_child() {
    if std::env::var_os(PROBE_ENV).is_none() {
        return;
    }
    match std::env::args().find_map(|arg| arg.strip_prefix("resumed:").map(str::to_owned)) {
        None => hand_over(),
        Some(numbers) => resumed(&numbers),
    }
}

/// The first run: a pipe with bytes in it, kept; a file, not kept; the state; then the exec.
fn hand_over() {
    let (read, mut write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map(|(r, w)| (r, fs::File::from(w))).unwrap();
    write.write_all(IN_THE_PIPE).unwrap();
    let not_kept = tempfile::tempfile().unwrap();
    let handover = Handover::prepare(STATE_FORMAT, PAYLOAD, FallbackExe::current().unwrap()).unwrap();
    let program = Program::check(&std::env::current_exe().unwrap()).unwrap();
    let numbers =
        format!("resumed:{},{},{},{}", handover.state_fd(), handover.exe_fd(), read.as_raw_fd(), not_kept.as_raw_fd());
    println!("before the exec: pid {}", std::process::id());
    let error = handover.exec(&program, &child_args(&[numbers]), &[read.as_fd()]);
    panic!("the exec failed: {error}");
}

/// The run the exec started: everything it was passed is there, and nothing else.
fn resumed(numbers: &str) {
    println!("after the exec: pid {}", std::process::id());
    let fds: Vec<RawFd> = numbers.split(',').map(|n| n.parse().unwrap()).collect();
    let [state, exe, kept, not_kept] = fds[..] else { panic!("four numbers: {numbers}") };

    let link = fs::read_link(format!("/proc/self/fd/{state}")).unwrap();
    assert!(link.to_string_lossy().starts_with(&format!("/memfd:{STATE_MEMFD_NAME}")), "{}", link.display());
    let state = fs::File::from(adopt(state).unwrap());
    assert_eq!(open(&state).unwrap(), Handed { format: STATE_FORMAT, payload: PAYLOAD.to_vec() });
    let seals = SealFlag::from_bits_retain(fcntl(state.as_fd(), FcntlArg::F_GET_SEALS).unwrap());
    assert!(seals.contains(SealFlag::F_SEAL_WRITE | SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW), "{seals:?}");
    // Adopted means close-on-exec again, and never adopted twice.
    let flags = FdFlag::from_bits_retain(fcntl(state.as_fd(), FcntlArg::F_GETFD).unwrap());
    assert!(flags.contains(FdFlag::FD_CLOEXEC));
    assert_eq!(adopt(state.as_raw_fd()).unwrap_err(), AdoptError::NotInherited(state.as_raw_fd()));

    let exe_link = fs::read_link(format!("/proc/self/fd/{exe}")).unwrap();
    assert_eq!(exe_link, std::env::current_exe().unwrap());
    drop(adopt(exe).unwrap());

    check(kept).unwrap();
    let mut pipe = fs::File::from(adopt(kept).unwrap());
    let mut arrived = vec![0u8; IN_THE_PIPE.len()];
    pipe.read_exact(&mut arrived).unwrap();
    assert_eq!(arrived, IN_THE_PIPE);

    // Closed by the exec (its number may have been reused since, by something this image opened).
    assert!(check(not_kept).is_err(), "descriptor {not_kept} was not kept, yet it was inherited");
    println!("the state, the kept pipe and the old executable arrived");
}

#[test]
fn a_failed_exec_puts_every_descriptor_back() {
    let dir = tempfile::tempdir().unwrap();
    // Executable, but no format the kernel knows: `execve` fails with ENOEXEC.
    let path = dir.path().join("not-a-program");
    fs::write(&path, [0u8; 64]).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o700)).unwrap();
    let program = Program::check(&path).unwrap();
    let (read, _write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
    let handover = Handover::prepare(STATE_FORMAT, PAYLOAD, FallbackExe::current().unwrap()).unwrap();
    let error = handover.exec(&program, &[], &[read.as_fd(), read.as_fd()]);
    // ETXTBSY when another test's fork holds the fresh file open for writing: the descriptors are back anyway.
    assert!(matches!(error, ExecError::Exec { errno: Errno::ENOEXEC | Errno::ETXTBSY, .. }), "{error}");
    let flags = FdFlag::from_bits_retain(fcntl(read.as_fd(), FcntlArg::F_GETFD).unwrap());
    assert!(flags.contains(FdFlag::FD_CLOEXEC), "close-on-exec is back");
}

#[test]
fn a_program_replaced_since_its_check_is_not_executed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new");
    fs::write(&path, [0u8; 64]).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o700)).unwrap();
    let program = Program::check(&path).unwrap();
    // Replaced by a file that could never run, should the check miss it.
    let other = dir.path().join("other");
    fs::write(&other, [0u8; 64]).unwrap();
    fs::rename(&other, &path).unwrap();
    let handover = Handover::prepare(STATE_FORMAT, PAYLOAD, FallbackExe::current().unwrap()).unwrap();
    let error = handover.exec(&program, &[], &[]).to_string();
    assert_eq!(error, format!("cannot upgrade to {}: the file changed since it was checked", path.display()));
}

#[test]
fn the_file_executed_is_the_one_checked_even_once_removed_from_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new");
    // Executable, but no format the kernel knows: executing it fails with ENOEXEC, and nothing runs.
    fs::write(&path, [0u8; 64]).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o700)).unwrap();
    let program = Program::check(&path).unwrap();
    assert!(!program.is_script());
    // Gone from its path after the check (as if swapped): what is executed is still the file checked, through
    // its descriptor, not a lookup of the path (ENOENT).
    fs::remove_file(&path).unwrap();
    let argv = [c_string(path.as_os_str()).unwrap()];
    let errno = program.execute(&argv, &environment().unwrap());
    // ETXTBSY when another test's fork holds the fresh file open for writing.
    assert!(matches!(errno, Errno::ENOEXEC | Errno::ETXTBSY), "{errno}");
}

#[test]
fn a_script_is_known_as_one_so_that_its_descriptor_crosses_the_exec() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new");
    fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o700)).unwrap();
    assert!(Program::check(&path).unwrap().is_script());
}

#[test]
fn the_new_image_is_told_where_everything_is() {
    let handover = Handover::prepare(STATE_FORMAT, PAYLOAD, FallbackExe::current().unwrap()).unwrap();
    let daemon: Vec<OsString> = ["daemon", "--name", "work"].map(OsString::from).to_vec();
    let args = handover.resume_args(&daemon);
    let expected: Vec<OsString> = [
        "resume".to_owned(),
        "--state-fd".to_owned(),
        handover.state_fd().to_string(),
        "--fallback-exe-fd".to_owned(),
        handover.exe_fd().to_string(),
        "--".to_owned(),
        "daemon".to_owned(),
        "--name".to_owned(),
        "work".to_owned(),
    ]
    .map(OsString::from)
    .to_vec();
    assert_eq!(args, expected);
    // The daemon's arguments are found again in the image this starts, for its own upgrade.
    assert_eq!(daemon_args_of(args), daemon);
    assert_eq!(daemon_args_of(daemon.clone()), daemon);
}
