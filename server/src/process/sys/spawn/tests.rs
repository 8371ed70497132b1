//! `posix_spawn` as the daemon uses it: the child's own `PATH`, `execvp`'s fallbacks, its signals, and its
//! session or group with the right descriptors.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;

use super::*;

/// Waits for `pid` and answers its exit code.
fn exit_code(pid: u32) -> i32 {
    match waitpid(Pid::from_raw(pid as i32), None).expect("wait") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("{other:?}"),
    }
}

/// Runs `program args` in a group of its own with `env`, output to `out`; its exit code, or the spawn's error.
fn run(program: &str, args: &[&str], env: &[(&str, &str)], cwd: &Path, out: &Path) -> io::Result<i32> {
    let file = std::fs::File::create(out).expect("output");
    let env: Vec<(OsString, OsString)> = env.iter().map(|(n, v)| ((*n).into(), (*v).into())).collect();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let leader = Leader::Group { stdout: file.as_fd(), stderr: file.as_fd() };
    let pid = spawn(&ChildSpec { program, args: &args, env: &env, cwd, leader })?;
    Ok(exit_code(pid))
}

/// An executable file `name` in `dir` with `text`.
fn executable(dir: &Path, name: &str, text: &str, mode: u32) {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[test]
fn a_name_is_looked_up_on_the_child_s_path_not_the_daemon_s() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (bin, out) = (dir.path().join("bin"), dir.path().join("out"));
    std::fs::create_dir(&bin).expect("bin");
    executable(&bin, "only-here", "#!/bin/sh\necho found \"$1\"\n", 0o755);
    let path = format!("/nowhere:{}", bin.display());
    assert_eq!(run("only-here", &["it"], &[("PATH", &path)], dir.path(), &out).expect("spawn"), 0);
    assert_eq!(std::fs::read_to_string(&out).expect("out"), "found it\n");
    let missing = run("only-here", &[], &[("PATH", "/nowhere")], dir.path(), &out).expect_err("not on that PATH");
    assert_eq!(missing.raw_os_error(), Some(libc::ENOENT));
    // Without PATH, the C library's default: /bin and /usr/bin.
    assert_eq!(run("true", &[], &[], dir.path(), &out).expect("true is in /bin or /usr/bin"), 0);
    // A relative entry and a relative path are looked at from the child's working directory.
    assert_eq!(run("only-here", &["too"], &[("PATH", "bin")], dir.path(), &out).expect("relative entry"), 0);
    assert_eq!(run("./bin/only-here", &["again"], &[], dir.path(), &out).expect("relative path"), 0);
    assert_eq!(std::fs::read_to_string(&out).expect("out"), "found again\n");
}

#[test]
fn a_file_that_cannot_run_is_skipped_and_a_file_without_a_format_runs_through_sh() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (first, second, out) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("out"));
    std::fs::create_dir(&first).expect("a");
    std::fs::create_dir(&second).expect("b");
    // Not executable in the first directory (skipped, as `execvp` does), a script without `#!` in the second.
    executable(&first, "tool", "#!/bin/sh\necho wrong\n", 0o644);
    executable(&second, "tool", "echo script \"$1\"\n", 0o755);
    let path = format!("{}:{}", first.display(), second.display());
    assert_eq!(run("tool", &["ran"], &[("PATH", &path)], dir.path(), &out).expect("spawn"), 0);
    assert_eq!(std::fs::read_to_string(&out).expect("out"), "script ran\n");
    let denied = run("tool", &[], &[("PATH", &first.display().to_string())], dir.path(), &out).expect_err("denied");
    assert_eq!(denied.raw_os_error(), Some(libc::EACCES), "found but not executable: EACCES, as execvp says");
}

#[test]
fn a_group_child_leads_its_group_with_default_signals_and_an_empty_mask() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    // The test's runtime ignores SIGPIPE; block a signal on this thread too.
    let mut blocked = nix::sys::signal::SigSet::empty();
    blocked.add(nix::sys::signal::Signal::SIGUSR1);
    let old = blocked.thread_swap_mask(nix::sys::signal::SigmaskHow::SIG_BLOCK).expect("mask");
    let script = "grep -E '^(SigBlk|SigIgn)' /proc/self/status; cat /proc/$$/stat";
    let code = run("/bin/sh", &["-c", script], &[], dir.path(), &out);
    old.thread_set_mask().expect("restore");
    assert_eq!(code.expect("spawn"), 0);
    let text = std::fs::read_to_string(&out).expect("out");
    assert!(text.contains("SigBlk:\t0000000000000000"), "{text}");
    assert!(text.contains("SigIgn:\t0000000000000000"), "{text}");
    // `pid (comm) state ppid pgrp session ...`
    let stat = text.lines().last().expect("stat");
    let fields: Vec<&str> = stat.rsplit_once(')').expect("comm").1.split_whitespace().collect();
    let pid = stat.split_whitespace().next().expect("pid");
    assert_eq!(fields[2], pid, "it leads its own group: {stat}");
    assert_ne!(fields[3], pid, "in the daemon's session: {stat}");
}

#[test]
fn a_session_child_has_the_pty_as_its_controlling_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let master = nix::pty::posix_openpt(nix::fcntl::OFlag::O_RDWR | nix::fcntl::OFlag::O_NOCTTY).expect("pty");
    nix::pty::grantpt(&master).expect("grant");
    nix::pty::unlockpt(&master).expect("unlock");
    let tty = std::path::PathBuf::from(nix::pty::ptsname_r(&master).expect("name"));
    let env = [(OsString::from("PATH"), OsString::from("/bin:/usr/bin"))];
    let args: Vec<String> = vec!["-c".into(), "tty; [ \"$(ps -o sid= -p $$)\" -eq $$ ] && echo leader".into()];
    let leader = Leader::Session { tty: &tty };
    let pid = spawn(&ChildSpec { program: "sh", args: &args, env: &env, cwd: dir.path(), leader }).expect("spawn");
    let mut seen = Vec::new();
    let mut chunk = [0u8; 256];
    // Read until the child's side closes (EIO once it exited).
    while let Ok(n) = nix::unistd::read(&master, &mut chunk) {
        if n == 0 {
            break;
        }
        seen.extend_from_slice(&chunk[..n]);
    }
    assert_eq!(exit_code(pid), 0);
    let text = String::from_utf8_lossy(&seen);
    assert!(text.contains(&tty.display().to_string()), "its terminal is the PTY: {text:?}");
    assert!(text.contains("leader"), "it leads its session: {text:?}");
}

#[test]
fn a_working_directory_gone_before_the_spawn_is_named_not_taken_for_a_missing_program() {
    // The callers check the directory first; one removed after that makes the child's `chdir` fail with the
    // `ENOENT` of a program that is not there.
    let dir = tempfile::tempdir().expect("tempdir");
    let (gone, out) = (dir.path().join("gone"), dir.path().join("out"));
    for program in ["true", "/bin/true"] {
        let error = run(program, &[], &[], &gone, &out).expect_err("no working directory");
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        assert_eq!(error.to_string(), format!("the working directory {} is gone", gone.display()));
    }
    // A program that is not there, in a working directory that is, is still the system's own error.
    let missing = run("no-such-program-here", &[], &[], dir.path(), &out).expect_err("not found");
    assert_eq!(missing.raw_os_error(), Some(libc::ENOENT));
}
