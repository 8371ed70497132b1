//! Taking ownership of the descriptors an upgrade passed across `execve` (the state's memory file, the old
//! executable, and what the state names: the listener, the lock, PTY masters, pipes, ...), by number, each once.
//!
//! Everything this program opens is close-on-exec (the standard library and our `nix` calls ask for it), so in
//! a freshly executed image a descriptor without `FD_CLOEXEC` is one it inherited and that nothing in it owns
//! yet. [`adopt`] checks exactly that and sets the flag as it takes the descriptor, under one lock, so a number
//! is adopted at most once and never while something else owns it. (The one place that clears the flag on a
//! descriptor it owns is the handover, just before `execve`, on descriptors it holds borrowed: nobody adopts
//! them in that instant, and the image that follows owns nothing yet.)
//!
//! This module opts in to `unsafe` (the crate denies it) for the three calls that work on a bare number.

#![allow(unsafe_code)]

use std::os::fd::{FromRawFd as _, OwnedFd, RawFd};
use std::sync::Mutex;

/// The lowest number an upgrade passes: 0, 1 and 2 are the standard streams, which are never adopted.
pub(crate) const FIRST_PASSED_FD: RawFd = 3;

/// Serialises [`adopt`]: the check of the flag and its setting happen as one step.
static ADOPTING: Mutex<()> = Mutex::new(());

/// Why a descriptor number could not be adopted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AdoptError {
    /// A standard stream's number (0, 1, 2).
    #[error("descriptor {0} is a standard stream, never one an upgrade passes")]
    Standard(RawFd),
    /// Nothing is open at that number.
    #[error("descriptor {0} is not open: the upgrade did not pass it")]
    NotOpen(RawFd),
    /// The descriptor is close-on-exec: this image opened it, or adopted it already.
    #[error("descriptor {0} was not inherited across the upgrade (or was adopted already)")]
    NotInherited(RawFd),
    /// `fcntl` failed on an open descriptor.
    #[error("cannot adopt descriptor {0}: {1}")]
    Flags(RawFd, nix::errno::Errno),
}

/// Checks, without taking it, that `fd` is open and inherited (not close-on-exec): what a resuming image asks of
/// every number its state names before it commits to anything.
pub(crate) fn check(fd: RawFd) -> Result<(), AdoptError> {
    let _adopting = ADOPTING.lock().unwrap_or_else(|e| e.into_inner());
    inherited_flags(fd).map(drop)
}

/// Takes ownership of the inherited descriptor `fd` and makes it close-on-exec, so that no child of this image
/// inherits it. Each number can be adopted once.
pub(crate) fn adopt(fd: RawFd) -> Result<OwnedFd, AdoptError> {
    let _adopting = ADOPTING.lock().unwrap_or_else(|e| e.into_inner());
    let flags = inherited_flags(fd)?;
    // Safety: F_SETFD on a bare number touches only that descriptor's flags; `fd` is open (checked under the
    // lock we hold) and nothing in this image owns it (it was not close-on-exec).
    if unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } == -1 {
        return Err(AdoptError::Flags(fd, nix::errno::Errno::last()));
    }
    // Safety: `fd` is open, was inherited (it was not close-on-exec) and nothing in this image owned it; it is
    // close-on-exec now, so no later call of `adopt` or `check` can take it again: this is its one owner.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Closes every descriptor this image inherited that is not one of `expected` (the numbers the state names):
/// what crossed the exec without being passed on purpose, such as a script's own descriptor, which its
/// interpreter opened again and left open when it executed this image. Call it before anything in this image
/// starts a process. Returns how many it closed.
pub(crate) fn close_strays(expected: &[RawFd]) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return 0 };
    let numbers: Vec<RawFd> =
        entries.flatten().filter_map(|entry| entry.file_name().to_str().and_then(|name| name.parse().ok())).collect();
    close_strays_among(numbers, expected)
}

/// [`close_strays`] of the open descriptors `numbers`.
fn close_strays_among(numbers: Vec<RawFd>, expected: &[RawFd]) -> usize {
    let mut closed = 0;
    for fd in numbers.into_iter().filter(|fd| *fd >= FIRST_PASSED_FD && !expected.contains(fd)) {
        // Not inherited (close-on-exec: this image's own, the listing's included) or gone: left alone.
        if let Ok(stray) = adopt(fd) {
            tracing::debug!(fd, "closing a descriptor inherited across the upgrade that the state does not name");
            drop(stray);
            closed += 1;
        }
    }
    closed
}

/// `fd`'s descriptor flags, if it is open and inherited. Call with [`ADOPTING`] held.
fn inherited_flags(fd: RawFd) -> Result<i32, AdoptError> {
    if fd < FIRST_PASSED_FD {
        return Err(AdoptError::Standard(fd));
    }
    // Safety: F_GETFD on a bare number only reads that descriptor's flags and fails with EBADF when nothing is
    // open there; it changes nothing.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags == -1 {
        return match nix::errno::Errno::last() {
            nix::errno::Errno::EBADF => Err(AdoptError::NotOpen(fd)),
            errno => Err(AdoptError::Flags(fd, errno)),
        };
    }
    if flags & libc::FD_CLOEXEC != 0 {
        return Err(AdoptError::NotInherited(fd));
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd as _;

    use super::*;

    #[test]
    fn standard_streams_and_closed_numbers_are_refused() {
        for fd in 0..FIRST_PASSED_FD {
            assert_eq!(adopt(fd).unwrap_err(), AdoptError::Standard(fd));
        }
        // Far above anything a test process opens.
        assert_eq!(check(1 << 20).unwrap_err(), AdoptError::NotOpen(1 << 20));
        assert_eq!(adopt(1 << 20).unwrap_err(), AdoptError::NotOpen(1 << 20));
    }

    #[test]
    fn a_descriptor_this_process_opened_is_refused() {
        // Close-on-exec, as everything we open: owned by `file`, so never adopted.
        let file = tempfile::tempfile().unwrap();
        let fd = file.as_raw_fd();
        assert_eq!(check(fd).unwrap_err(), AdoptError::NotInherited(fd));
        assert_eq!(adopt(fd).unwrap_err(), AdoptError::NotInherited(fd));
    }

    #[test]
    fn only_inherited_descriptors_not_expected_are_closed_as_strays() {
        use nix::fcntl::{OFlag, open};
        // Two inheritable descriptors (as an exec would have left them), one expected; and one of our own.
        // (Only these numbers are looked at: other tests in this process hold inheritable descriptors too.)
        let inheritable = || open("/dev/null", OFlag::O_RDONLY, nix::sys::stat::Mode::empty()).unwrap();
        let (kept, stray) = (inheritable(), inheritable());
        let own = tempfile::tempfile().unwrap();
        let (kept, stray) = (std::os::fd::IntoRawFd::into_raw_fd(kept), std::os::fd::IntoRawFd::into_raw_fd(stray));
        // One closed: not ours (close-on-exec, so never adopted), not the expected one (adopted below).
        assert_eq!(close_strays_among(vec![kept, stray, own.as_raw_fd()], &[kept]), 1);
        drop(adopt(kept).expect("the expected descriptor is left inherited"));
        assert_eq!(check(own.as_raw_fd()).unwrap_err(), AdoptError::NotInherited(own.as_raw_fd()));
    }

    // Adopting an inherited descriptor is tested where one exists: in the image an exec started
    // (`upgrade::exec::tests`).
}
