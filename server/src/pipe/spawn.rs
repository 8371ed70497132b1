//! Starts a pipe process: checks the request, opens the output file, and starts the child without a terminal.
//!
//! The order is the spec's: everything that can be checked without the file system is checked first, so a
//! rejected request never creates or truncates the output file; then the file is opened (a failure starts
//! nothing); then the child is started (a missing program or cwd fails here, after the file was opened). Every
//! descriptor the daemon needs is made before the spawn, so nothing can fail once the child runs and no child is
//! ever left untracked.
//!
//! The child gets exactly the request's environment, its own process group, stdin on `/dev/null`, and one pipe
//! for both stdout and stderr, so their bytes stay in order, with default signal dispositions and an empty
//! signal mask (the daemon blocks SIGTERM, SIGINT and SIGHUP, and a mask survives `exec`). It is started with
//! `posix_spawn` (`process::sys::spawn`, with every other `unsafe` call), which costs the same however many
//! processes the daemon runs; a program without a slash is looked up on the child's `PATH`.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl, open};
use nix::sys::stat::Mode;
use opencode_pty_protocol::{MAX_METADATA_BYTES, MAX_PATH_CHARS};
use serde_json::{Map, Value};

use super::PipeSpec;
use crate::bounds;
use crate::error::ServiceError;
use crate::process::sys;

/// The mode a new output file is created with, before the daemon's umask is applied.
pub(super) const OUTPUT_FILE_MODE: u32 = 0o666;

/// Refuses `metadata` whose serialized JSON is over [`MAX_METADATA_BYTES`], or answers its serialized size.
/// Serialization stops as soon as the bound is passed, so an oversized object costs no more than the bound.
pub(crate) fn check_metadata(metadata: &Map<String, Value>) -> Result<usize, ServiceError> {
    /// Counts bytes and fails once there are too many.
    struct Budget(usize);

    impl Write for Budget {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            if self.0 > MAX_METADATA_BYTES {
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let mut budget = Budget(0);
    serde_json::to_writer(&mut budget, metadata)
        .map_err(|_| ServiceError::invalid(format!("metadata is over the {MAX_METADATA_BYTES}-byte limit")))?;
    Ok(budget.0)
}

/// Checks the length of every string a pipe process reports back (program, args, cwd, group id, output path;
/// see `bounds`); answers the size of its `command` as JSON.
pub(crate) fn check_echoed(spec: &PipeSpec) -> Result<usize, ServiceError> {
    let command_bytes = bounds::check_process(&spec.program, &spec.args, &spec.cwd.to_string_lossy(), &spec.group_id)?;
    bounds::check_exec_strings(&spec.program, &spec.args, &spec.cwd.to_string_lossy(), &spec.env)?;
    bounds::check_chars("output_path", &spec.output_path.to_string_lossy(), MAX_PATH_CHARS)?;
    Ok(command_bytes)
}

/// Refuses an output path inside `dir` (the daemon's runtime directory, whose registration, lock and record an
/// output file would overwrite), however it is spelled: the directory the file would be created in is resolved
/// as the kernel resolves it (symbolic links, `..`), and it and each of its parents is compared with `dir` by
/// device and inode (so a bind mount of `dir` is caught too); an existing file with several links is compared
/// with `dir`'s files. A final component that is a symbolic link is refused anyway when the file is opened.
/// A path whose parent does not exist is left to the open, which fails.
pub(crate) fn check_outside(path: &Path, dir: &Path) -> Result<(), ServiceError> {
    use std::os::unix::fs::MetadataExt;
    let id = |meta: std::fs::Metadata| (meta.dev(), meta.ino());
    let Ok(protected) = std::fs::metadata(dir).map(id) else { return Ok(()) };
    let refuse = || ServiceError::ProtectedOutput { path: path.display().to_string(), dir: dir.display().to_string() };
    let resolved = match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent).map(|parent| parent.join(name)),
        _ => std::fs::canonicalize(path),
    };
    let Ok(resolved) = resolved else { return Ok(()) };
    if resolved.ancestors().any(|ancestor| std::fs::metadata(ancestor).map(id).ok() == Some(protected)) {
        return Err(refuse());
    }
    if let Ok(meta) = std::fs::symlink_metadata(&resolved)
        && meta.is_file()
        && meta.nlink() > 1
    {
        let target = id(meta);
        let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
        if entries.filter_map(|entry| entry.metadata().ok()).any(|entry| id(entry) == target) {
            return Err(refuse());
        }
    }
    Ok(())
}

/// Checks a spec before anything touches the file system; answers the metadata's serialized size.
pub(crate) fn validate(spec: &PipeSpec) -> Result<usize, ServiceError> {
    if spec.program.trim().is_empty() {
        return Err(ServiceError::invalid("program cannot be empty"));
    }
    // Lengths first: later messages quote the paths.
    check_echoed(spec)?;
    if !spec.cwd.is_absolute() {
        return Err(ServiceError::invalid(format!("cwd must be an absolute path (got {})", spec.cwd.display())));
    }
    if !spec.output_path.is_absolute() {
        return Err(ServiceError::invalid(format!(
            "output_path must be an absolute path (got {})",
            spec.output_path.display()
        )));
    }
    check_metadata(&spec.metadata)
}

/// Opens (creating or truncating) the output file for writing, refusing a symlink as its final component.
///
/// The descriptor is non-blocking, so a FIFO without a reader fails here instead of hanging the request, and a
/// slow one makes the reader wait in `poll` where it can still be stopped. Regular files are unaffected.
pub(crate) fn open_output(path: &Path) -> Result<File, ServiceError> {
    let flags = OFlag::O_WRONLY
        | OFlag::O_CREAT
        | OFlag::O_TRUNC
        | OFlag::O_NOFOLLOW
        | OFlag::O_CLOEXEC
        | OFlag::O_NONBLOCK
        | OFlag::O_NOCTTY;
    let fd = open(path, flags, Mode::from_bits_truncate(OUTPUT_FILE_MODE)).map_err(|errno| {
        ServiceError::OutputFile { path: path.display().to_string(), reason: open_failure(path, errno) }
    })?;
    Ok(File::from(fd))
}

/// Why opening the output file failed, in words that fit the cause: `O_NOFOLLOW`'s ELOOP only means a symlink
/// when the final component is one (a loop earlier in the path gives the same errno), and `O_NONBLOCK`'s ENXIO
/// on a FIFO means nothing reads it.
fn open_failure(path: &Path, errno: Errno) -> String {
    use std::os::unix::fs::FileTypeExt;
    // lstat, never following the final component.
    let file_type = std::fs::symlink_metadata(path).ok().map(|m| m.file_type());
    match (errno, file_type) {
        (Errno::ELOOP, Some(t)) if t.is_symlink() => "its final component is a symbolic link".to_owned(),
        (Errno::ENXIO, Some(t)) if t.is_fifo() => "it is a FIFO with no reader".to_owned(),
        (other, _) => std::io::Error::from(other).to_string(),
    }
}

/// A started child and the daemon's end of its output pipe.
#[derive(Debug)]
pub(crate) struct Spawned {
    /// The child's process id (also its process group id).
    pub(crate) pid: u32,
    /// The read end of the stdout/stderr pipe: non-blocking and close-on-exec.
    pub(crate) output: OwnedFd,
}

/// The capacity asked for a pipe process's output pipe (1 MiB, Linux's default ceiling for unprivileged
/// processes, `/proc/sys/fs/pipe-max-size`); the kernel's default is 64 KiB.
pub(crate) const OUTPUT_PIPE_BYTES: i32 = 1024 * 1024;

/// Starts the child. A program or cwd that cannot be used is a [`ServiceError::Spawn`], and nothing runs.
pub(crate) fn spawn(spec: &PipeSpec) -> Result<Spawned, ServiceError> {
    let fail = |reason: String| ServiceError::Spawn { program: spec.program.clone(), reason };
    if !spec.cwd.is_dir() {
        return Err(fail(format!("cwd {} is not a directory", spec.cwd.display())));
    }
    // Close-on-exec: no other child of the daemon inherits either end.
    let (read, write) =
        nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| fail(format!("cannot create the output pipe: {e}")))?;
    // Only the read end (its own open file description) becomes non-blocking; the child's end stays blocking.
    // Done before the spawn, so nothing can fail once the child runs.
    let flags =
        fcntl(&read, FcntlArg::F_GETFL).map_err(|e| fail(format!("cannot read the output pipe's flags: {e}")))?;
    fcntl(&read, FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK))
        .map_err(|e| fail(format!("cannot make the output pipe non-blocking: {e}")))?;
    // A larger pipe lets the child write further ahead of the reader (fewer wake-ups each way); the system's
    // limit for unprivileged pipes may refuse it, which only leaves the default size.
    let _ = fcntl(&read, FcntlArg::F_SETPIPE_SZ(OUTPUT_PIPE_BYTES));
    let env: Vec<_> = spec.env.iter().map(|(name, value)| (name.into(), value.into())).collect();
    let child = sys::spawn::ChildSpec {
        program: &spec.program,
        args: &spec.args,
        env: &env,
        cwd: &spec.cwd,
        leader: sys::spawn::Leader::Group { stdout: write.as_fd(), stderr: write.as_fd() },
    };
    let pid = sys::spawn::spawn(&child).map_err(|e| fail(e.to_string()))?;
    // Dropping the daemon's copy of the write end leaves the child (and whatever it starts) as the only
    // writers, so EOF arrives when they are all done. The wait thread waits for the pid itself, and terminate
    // reaps it.
    drop(write);
    Ok(Spawned { pid, output: read })
}

#[cfg(test)]
mod tests {
    #[test]
    fn output_paths_inside_the_runtime_directory_are_refused_however_spelled() {
        let temp = tempfile::TempDir::new().unwrap();
        let runtime = temp.path().join("rt");
        std::fs::create_dir(&runtime).unwrap();
        std::fs::write(runtime.join("service.json"), "{}").unwrap();
        let other = temp.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::os::unix::fs::symlink(&runtime, temp.path().join("link")).unwrap();
        std::fs::hard_link(runtime.join("service.json"), other.join("hard")).unwrap();
        let refused = [
            runtime.join("service.json"),
            runtime.join("service.lock"),
            runtime.join("new-file"),
            other.join("..").join("rt").join("service.groups"),
            temp.path().join("link").join("service.json"),
            runtime.clone(),
            other.join("hard"),
        ];
        for path in refused {
            let error = super::check_outside(&path, &runtime).unwrap_err().to_string();
            let expected = format!(
                "output_path {} is inside the daemon's runtime directory {}: refused",
                path.display(),
                runtime.display()
            );
            assert_eq!(error, expected);
        }
        for path in [other.join("out.log"), temp.path().join("rt.log"), temp.path().join("missing").join("x")] {
            super::check_outside(&path, &runtime).unwrap();
        }
    }
}
