//! Starting a child with `posix_spawn`: the C library starts it with a clone that shares the daemon's memory
//! until `exec` (vfork-like), where `fork` copies the daemon's page tables and every mapping first. A daemon
//! with a thousand terminals has three thousand thread stacks mapped: a `fork` then took tens of milliseconds
//! and grew with every terminal, so creating terminals one after the other cost O(n²); with `posix_spawn` it
//! costs the same at any count (issue 31).
//!
//! Everything the child needs between the clone and `exec` is what `posix_spawn` can be told: default
//! dispositions for every signal and an empty mask, a new session (a PTY child, whose slave is then opened by
//! path as its descriptors 0 to 2, which makes it the controlling terminal) or a new process group (a pipe
//! child), and its working directory. A program without a slash is looked up on the child's own `PATH` (the
//! C library's `posix_spawnp` would use the daemon's), trying each directory in turn as `execvp` does, and a
//! file that is not an executable format runs through `/bin/sh` as `execvp` runs it.

#![allow(unsafe_code)]

use std::ffi::{CStr, CString, OsString};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

/// The search path of a child whose environment has no `PATH` (the C library's default for `execvp`).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// The shell a file that is not an executable format runs through, as `execvp` does.
const SCRIPT_SHELL: &str = "/bin/sh";

/// How the child starts, besides its program.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Leader<'a> {
    /// A session leader whose controlling terminal, standard input, output and error is the PTY slave `tty`.
    Session {
        /// The slave's path (`/dev/pts/N`).
        tty: &'a Path,
    },
    /// The leader of a new process group in the daemon's session, its input `/dev/null`, its output and
    /// errors to the given descriptors.
    Group {
        /// Becomes descriptor 1.
        stdout: BorrowedFd<'a>,
        /// Becomes descriptor 2.
        stderr: BorrowedFd<'a>,
    },
}

/// A child to start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChildSpec<'a> {
    /// The program: a path (with a slash, relative ones from `cwd`), or a name looked up on the child's `PATH`.
    pub(crate) program: &'a str,
    /// Its arguments, after `argv[0]` (which is `program` as given).
    pub(crate) args: &'a [String],
    /// Its whole environment.
    pub(crate) env: &'a [(OsString, OsString)],
    /// Its working directory.
    pub(crate) cwd: &'a Path,
    /// Its session or group and its descriptors 0 to 2.
    pub(crate) leader: Leader<'a>,
}

/// Starts the child; its pid. The errors are the system's, as `exec` reported them (a program that is not
/// found: `ENOENT`, or `EACCES` when a candidate was found but could not be run), except that a working
/// directory removed since the caller checked it says so: the child's `chdir` fails with the same `ENOENT` as
/// a program that is not there, which would otherwise read as "not found".
pub(crate) fn spawn(spec: &ChildSpec<'_>) -> io::Result<u32> {
    spawn_child(spec).map_err(|error| {
        let missing = matches!(error.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR));
        if missing && !spec.cwd.is_dir() {
            let message = format!("the working directory {} is gone", spec.cwd.display());
            return io::Error::new(io::ErrorKind::NotFound, message);
        }
        error
    })
}

/// [`spawn`], with the system's errors as they are.
fn spawn_child(spec: &ChildSpec<'_>) -> io::Result<u32> {
    let argv = arguments(spec.program, spec.args)?;
    let envp: Vec<CString> = spec
        .env
        .iter()
        .map(|(name, value)| {
            let mut pair = name.clone().into_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            cstring(pair)
        })
        .collect::<io::Result<_>>()?;
    let attributes = Attributes::new(spec.leader)?;
    let actions = Actions::new(spec.leader, spec.cwd)?;
    let start = |path: &CStr, argv: &[CString]| spawn_once(path, &actions, &attributes, argv, &envp);
    if spec.program.contains('/') {
        return start(&cstring(spec.program.as_bytes().to_vec())?, &argv).or_else(|error| match error {
            ENOEXEC => start_script(spec.program.as_bytes(), spec.args, &start),
            error => Err(io::Error::from_raw_os_error(error)),
        });
    }
    let path = spec.env.iter().find(|(name, _)| name == "PATH").map(|(_, value)| value.as_bytes());
    let mut denied = false;
    for dir in path.unwrap_or(DEFAULT_PATH.as_bytes()).split(|&b| b == b':') {
        // An empty entry is the working directory.
        let mut candidate = if dir.is_empty() { b".".to_vec() } else { dir.to_vec() };
        candidate.push(b'/');
        candidate.extend_from_slice(spec.program.as_bytes());
        // A candidate that is not there is skipped without starting anything (a relative one is looked at
        // from the child's working directory, where `exec` will look).
        let there = spec.cwd.join(std::ffi::OsStr::from_bytes(&candidate));
        if let Err(error) = std::fs::metadata(&there)
            && matches!(error.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR))
        {
            continue;
        }
        match start(&cstring(candidate.clone())?, &argv) {
            Ok(pid) => return Ok(pid),
            Err(ENOEXEC) => return start_script(&candidate, spec.args, &start),
            // As `execvp`: this one cannot be run, a later one may.
            Err(libc::EACCES) => denied = true,
            Err(libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT) => {}
            Err(error) => return Err(io::Error::from_raw_os_error(error)),
        }
    }
    Err(io::Error::from_raw_os_error(if denied { libc::EACCES } else { libc::ENOENT }))
}

/// `exec`'s error for a file that is not an executable format.
const ENOEXEC: i32 = libc::ENOEXEC;

/// Runs `file` through [`SCRIPT_SHELL`], as `execvp` does with a file that is not an executable format.
fn start_script(
    file: &[u8],
    args: &[String],
    start: &impl Fn(&CStr, &[CString]) -> Result<u32, i32>,
) -> io::Result<u32> {
    let shell = cstring(SCRIPT_SHELL.as_bytes().to_vec())?;
    let mut argv = vec![shell.clone(), cstring(file.to_vec())?];
    argv.extend(args.iter().map(|arg| cstring(arg.as_bytes().to_vec())).collect::<io::Result<Vec<_>>>()?);
    start(&shell, &argv).map_err(io::Error::from_raw_os_error)
}

/// `argv`: the program as given, then its arguments.
fn arguments(program: &str, args: &[String]) -> io::Result<Vec<CString>> {
    std::iter::once(program).chain(args.iter().map(String::as_str)).map(|s| cstring(s.as_bytes().to_vec())).collect()
}

/// A C string, or `InvalidInput` for one with a NUL (the daemon refuses those before it gets here).
fn cstring(bytes: Vec<u8>) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in the child's command"))
}

/// A null-terminated array of pointers to `strings`, which must outlive it.
fn pointers(strings: &[CString]) -> Vec<*mut libc::c_char> {
    strings.iter().map(|s| s.as_ptr().cast_mut()).chain(std::iter::once(std::ptr::null_mut())).collect()
}

/// One `posix_spawn` of `path`; the pid, or the error number.
fn spawn_once(
    path: &CStr,
    actions: &Actions,
    attributes: &Attributes,
    argv: &[CString],
    envp: &[CString],
) -> Result<u32, i32> {
    let (argv, envp) = (pointers(argv), pointers(envp));
    let mut pid: libc::pid_t = 0;
    // Safety: every pointer is valid for the call: `path` and the strings behind `argv` and `envp` (both
    // null-terminated) are borrowed for its duration, and `actions` and `attributes` were initialised by
    // their constructors and are destroyed only when dropped, after it.
    let error = unsafe {
        libc::posix_spawn(&mut pid, path.as_ptr(), actions.as_ptr(), attributes.as_ptr(), argv.as_ptr(), envp.as_ptr())
    };
    match error {
        0 => Ok(u32::try_from(pid).unwrap_or_default()),
        error => Err(error),
    }
}

/// Fails with the error number a `posix_spawn*` setter returned, if any.
fn check(error: libc::c_int) -> io::Result<()> {
    if error == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(error)) }
}

/// The child's attributes: default dispositions for every signal, an empty mask, and a session or a group.
struct Attributes(Box<MaybeUninit<libc::posix_spawnattr_t>>);

impl Attributes {
    fn new(leader: Leader<'_>) -> io::Result<Attributes> {
        let mut attributes = Box::new(MaybeUninit::uninit());
        // Safety: `posix_spawnattr_init` initialises the value behind the pointer, which is valid and owned.
        check(unsafe { libc::posix_spawnattr_init(attributes.as_mut_ptr()) })?;
        let attributes = Attributes(attributes);
        let leads = match leader {
            Leader::Session { .. } => libc::POSIX_SPAWN_SETSID,
            Leader::Group { .. } => libc::POSIX_SPAWN_SETPGROUP as libc::c_short,
        };
        let flags = leads | (libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF) as libc::c_short;
        let (all, none) = (every_signal(), nix::sys::signal::SigSet::empty());
        let raw = attributes.as_ptr().cast_mut();
        // Safety: `raw` points at the attributes initialised above, owned by `attributes`; the signal sets are
        // live locals the setters copy.
        unsafe {
            check(libc::posix_spawnattr_setflags(raw, flags))?;
            check(libc::posix_spawnattr_setsigdefault(raw, &all))?;
            check(libc::posix_spawnattr_setsigmask(raw, none.as_ref()))?;
            // Group 0: the child's own pid (only read with `POSIX_SPAWN_SETPGROUP`).
            check(libc::posix_spawnattr_setpgroup(raw, 0))?;
        }
        Ok(attributes)
    }

    fn as_ptr(&self) -> *const libc::posix_spawnattr_t {
        self.0.as_ptr()
    }
}

impl Drop for Attributes {
    fn drop(&mut self) {
        // Safety: initialised by `new` (an `Attributes` exists only after its init succeeded), destroyed once.
        unsafe { libc::posix_spawnattr_destroy(self.0.as_mut_ptr()) };
    }
}

/// Every signal from 1 to `SIGRTMAX`, the C library's own two included: its `sigfillset` and `sigaddset` leave
/// those out, and its spawn then leaves them ignored in the child, where `fork` and `exec` left them at their
/// default.
fn every_signal() -> libc::sigset_t {
    const WORD_BITS: usize = libc::c_ulong::BITS as usize;
    let mut set = MaybeUninit::<libc::sigset_t>::zeroed();
    let words = std::mem::size_of::<libc::sigset_t>() / std::mem::size_of::<libc::c_ulong>();
    let base = set.as_mut_ptr().cast::<libc::c_ulong>();
    for signal in 1..=libc::SIGRTMAX() as usize {
        let (word, bit) = ((signal - 1) / WORD_BITS, (signal - 1) % WORD_BITS);
        if word < words {
            // Safety: a `sigset_t` is an array of `words` unsigned longs on Linux (glibc and musl), signal n
            // at bit n-1, as the C library's own `sigismember` reads it; `word` is within it.
            unsafe { *base.add(word) |= 1 << bit };
        }
    }
    // Safety: zeroed and then only bits set: a valid set.
    unsafe { set.assume_init() }
}

/// What the child does with its descriptors and directory before `exec`, in order.
struct Actions(Box<MaybeUninit<libc::posix_spawn_file_actions_t>>);

impl Actions {
    fn new(leader: Leader<'_>, cwd: &Path) -> io::Result<Actions> {
        let mut actions = Box::new(MaybeUninit::uninit());
        // Safety: `posix_spawn_file_actions_init` initialises the value behind the pointer, valid and owned.
        check(unsafe { libc::posix_spawn_file_actions_init(actions.as_mut_ptr()) })?;
        let actions = Actions(actions);
        let raw = actions.0.as_ptr().cast_mut();
        let cwd = cstring(cwd.as_os_str().as_bytes().to_vec())?;
        // Safety: `raw` points at the actions initialised above, owned by `actions`; each path is a live C
        // string the call copies, each descriptor a plain number.
        unsafe {
            match leader {
                Leader::Session { tty } => {
                    let tty = cstring(tty.as_os_str().as_bytes().to_vec())?;
                    // Opened after `setsid` and without `O_NOCTTY`: it becomes the controlling terminal.
                    check(libc::posix_spawn_file_actions_addopen(raw, 0, tty.as_ptr(), libc::O_RDWR, 0))?;
                    check(libc::posix_spawn_file_actions_adddup2(raw, 0, 1))?;
                    check(libc::posix_spawn_file_actions_adddup2(raw, 0, 2))?;
                }
                Leader::Group { stdout, stderr } => {
                    check(libc::posix_spawn_file_actions_addopen(raw, 0, c"/dev/null".as_ptr(), libc::O_RDONLY, 0))?;
                    check(libc::posix_spawn_file_actions_adddup2(raw, stdout.as_raw_fd(), 1))?;
                    check(libc::posix_spawn_file_actions_adddup2(raw, stderr.as_raw_fd(), 2))?;
                }
            }
            check(libc::posix_spawn_file_actions_addchdir_np(raw, cwd.as_ptr()))?;
        }
        Ok(actions)
    }

    fn as_ptr(&self) -> *const libc::posix_spawn_file_actions_t {
        self.0.as_ptr()
    }
}

impl Drop for Actions {
    fn drop(&mut self) {
        // Safety: initialised by `new` (an `Actions` exists only after its init succeeded), destroyed once.
        unsafe { libc::posix_spawn_file_actions_destroy(self.0.as_mut_ptr()) };
    }
}

#[cfg(test)]
mod tests;
