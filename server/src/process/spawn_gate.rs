//! The spawn gate: no process is started while an in-place upgrade hands descriptors across `execve`.
//!
//! The upgrade clears close-on-exec on exactly the descriptors it passes (the listener, the lock, every PTY
//! master and pipe) just before `execve`: a child forked by another thread in that window would inherit them,
//! and keep a terminal's master or the service lock open behind the daemon's back. So every place that starts
//! a process (a create's spawn, the guardian, an upgrade's preflight) takes a [`Pass`] for the spawn itself
//! (fork to exec) from the process's gate ([`GATE`]), and the upgrade closes it ([`SpawnGate::close`]) from before its capture until it fell back and
//! put everything back (or for good: `execve` ends every thread). A spawn that comes while the gate is closed
//! waits for it to open again.
//!
//! A preflight (`PROGRAM upgrade-check`, run by an owner's `upgrade` before anything changes) is a process
//! that runs for a while. One that belongs to an owner the carried-out upgrade superseded may still be running
//! when the daemon upgrades; its thread would vanish at `execve`, leaving the process running and never
//! reaped. So a running preflight is watched ([`Pass::watch`]) until its thread has reaped it, and the upgrade
//! ends every one ([`SpawnGate::end_checks`], and again as it closes the gate, waiting until each is reaped).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// The gate of this process (one daemon per process).
pub(crate) static GATE: SpawnGate = SpawnGate::new();

/// A spawn gate: [`GATE`], or one of a test's own.
#[derive(Debug)]
pub(crate) struct SpawnGate {
    state: Mutex<GateState>,
    /// Signalled when a spawn ends, a watched check is reaped, or the gate opens.
    changed: Condvar,
}

/// Under the gate's lock.
#[derive(Debug)]
struct GateState {
    /// An upgrade has closed the gate.
    closed: bool,
    /// Spawns under way (each holds a [`Pass`]).
    spawning: usize,
    /// Checks running (each a process in a group of its own, not reaped yet), by a number of their own; at
    /// most one per connection, so bounded like the connections (`MAX_CONNECTIONS`).
    checks: BTreeMap<u64, Check>,
    next_check: u64,
}

/// A running check: its pid (its process group's id) and whether an upgrade ended it.
#[derive(Debug)]
struct Check {
    pid: Pid,
    ended: Arc<AtomicBool>,
}

impl GateState {
    /// Kills every running check's process group (each is unreaped, so its id is still its own).
    fn end_checks(&self) {
        for check in self.checks.values() {
            check.ended.store(true, Ordering::Release);
            let _ = killpg(check.pid, Signal::SIGKILL);
        }
    }
}

impl SpawnGate {
    /// An open gate.
    pub(crate) const fn new() -> SpawnGate {
        let state = GateState { closed: false, spawning: 0, checks: BTreeMap::new(), next_check: 0 };
        SpawnGate { state: Mutex::new(state), changed: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until the gate is open, then holds it open for one spawn.
    pub(crate) fn pass(&'static self) -> Pass {
        let mut state = self.lock();
        while state.closed {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.spawning += 1;
        Pass { gate: self }
    }

    /// Kills every running check now, without closing the gate: an upgrade does it first, so that the
    /// connections that asked for them are answered while it quiesces the connections.
    pub(crate) fn end_checks(&self) {
        self.lock().end_checks();
    }

    /// Closes the gate: no spawn starts from now on, every running check is killed, and this returns once the
    /// spawns under way have returned and the checks were reaped (each by its own thread, which a check's
    /// deadline bounds).
    pub(crate) fn close(&'static self) -> Closed {
        let mut state = self.lock();
        state.closed = true;
        state.end_checks();
        while state.spawning > 0 || !state.checks.is_empty() {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        Closed { gate: self }
    }
}

/// Leave to start one process; the gate stays open until it is dropped (or turned into a [`Watched`]). Drop
/// it once the spawn returned: the child has then executed its program, and holds only what it inherited then.
#[derive(Debug)]
pub(crate) struct Pass {
    gate: &'static SpawnGate,
}

impl Pass {
    /// The spawn started the check `pid` (the leader of a process group of its own): from now on it is
    /// watched until the returned guard is dropped, which must be after it was reaped.
    pub(crate) fn watch(self, pid: u32) -> Watched {
        let gate = self.gate;
        let mut state = gate.lock();
        let number = state.next_check;
        state.next_check += 1;
        let ended = Arc::new(AtomicBool::new(false));
        let pid = Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX));
        state.checks.insert(number, Check { pid, ended: ended.clone() });
        // The pass ends here, as the check is watched: `close` sees one or the other.
        state.spawning -= 1;
        std::mem::forget(self);
        drop(state);
        gate.changed.notify_all();
        Watched { gate, number, ended }
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        self.gate.lock().spawning -= 1;
        self.gate.changed.notify_all();
    }
}

/// A running check, watched until it is dropped (after its process was reaped).
#[derive(Debug)]
pub(crate) struct Watched {
    gate: &'static SpawnGate,
    number: u64,
    ended: Arc<AtomicBool>,
}

impl Watched {
    /// Whether an upgrade killed it.
    pub(crate) fn ended_by_upgrade(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.gate.lock().checks.remove(&self.number);
        self.gate.changed.notify_all();
    }
}

/// The gate closed by [`SpawnGate::close`]; it opens again when dropped.
#[derive(Debug)]
pub(crate) struct Closed {
    gate: &'static SpawnGate,
}

impl Drop for Closed {
    fn drop(&mut self) {
        self.gate.lock().closed = false;
        self.gate.changed.notify_all();
    }
}

#[cfg(test)]
mod tests;
