//! The daemon's shared state, which every serving part takes: the process service, the registration,
//! ownership and its condvar, the stop flag, an in-place upgrade asked for (handed to the main thread, which
//! carries it out: `daemon/upgrading`), the registry of open connections (bounded, shut down at exit so none can
//! hold the daemon, and quiesced before an upgrade), the two frame budgets and the count of held connections.

use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use opencode_pty_protocol::Registration;

use super::intake::{Budget, Kind, MAX_AUTHENTICATED_PARTIAL_BYTES, MAX_UNAUTHENTICATED_BYTES};
use super::ownership::Ownership;
use crate::daemon::upgrading::Pending;
use crate::service::ProcessService;

/// The answer to a connection accepted while the daemon stops (clients tell a stopping daemon by it).
pub const DAEMON_STOPPING: &str = "the daemon is stopping";

/// Connections open at once; one more is answered `error` ([`TOO_MANY_CONNECTIONS`]) and closed.
pub const MAX_CONNECTIONS: usize = 1024;

/// The refusal of one connection too many (it names [`MAX_CONNECTIONS`]).
const TOO_MANY_CONNECTIONS: &str = "too many connections: the daemon serves at most 1024 at once";

/// Connections kept for requests that are answered at once (and for `own`): held connections (subscriptions
/// and `wait`s) never take them (SPEC N11).
pub const CONNECTION_RESERVE: usize = 64;

/// Subscriptions and `wait`s held at once; one more is answered `error` ([`TOO_MANY_HELD`]) and closed. The owner
/// channel does not count.
pub const MAX_HELD_CONNECTIONS: usize = MAX_CONNECTIONS - CONNECTION_RESERVE;

/// The refusal of one held connection too many (it names [`MAX_HELD_CONNECTIONS`] and [`CONNECTION_RESERVE`]).
pub(crate) const TOO_MANY_HELD: &str = "too many held connections: the daemon holds at most 960 subscriptions and \
                                        waits at once, keeping 64 connections for other requests";

/// The refusal of an `upgrade` while another one is under way.
pub(crate) const UPGRADE_UNDER_WAY: &str = "an upgrade is already under way";

/// The refusal of `own` while the daemon upgrades in place (the claim can be sent again once it answers).
pub(crate) const UPGRADING: &str = "the daemon is upgrading in place; claim it again in a moment";

/// What the main thread is woken for.
#[derive(Debug)]
pub(crate) enum Wakeup {
    /// The daemon must stop.
    Stop,
    /// The owner asked for an in-place upgrade, which passed its checks.
    Upgrade(Pending),
}

/// What a registered connection carries, as far as an upgrade's quiesce cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Requests answered at once, a `wait`, the owner channel: their reads are shut before the capture.
    Requests,
    /// A subscription: ended by the capture, once its last frame is written.
    Subscription,
}

/// A registered connection.
#[derive(Debug)]
struct Connection {
    stream: Arc<UnixStream>,
    role: Role,
}

/// Everything the daemon's threads share.
#[derive(Debug)]
pub(crate) struct DaemonState {
    /// The processes.
    pub service: ProcessService,
    /// What the daemon published (its token authenticates every envelope).
    pub registration: Registration,
    /// How long a new connection may take to send its first request ([`super::connection::FIRST_REQUEST_TIMEOUT`],
    /// shorter only in tests of what it must not cut).
    pub first_request_timeout: Duration,
    ownership: Mutex<Ownership>,
    /// Signalled whenever ownership changes or the daemon starts stopping.
    changed: Condvar,
    stopping: AtomicBool,
    /// An in-place upgrade the owner asked for, until the main thread takes it.
    upgrade: Mutex<Option<Pending>>,
    /// Set (under the ownership lock) from the owner's `upgrade` until the upgrade fell back.
    upgrading: AtomicBool,
    /// The open connections, shared with their handlers (no duplicated descriptors).
    connections: Mutex<HashMap<u64, Connection>>,
    /// Signalled when a connection ends.
    connection_ended: Condvar,
    next_connection: AtomicU64,
    /// The room for frames before their token is checked (`intake.rs`).
    unauthenticated: Budget,
    /// The room for the owner channel's partial frames.
    authenticated: Budget,
    /// Subscriptions and waits held now (at most [`MAX_HELD_CONNECTIONS`]).
    held: AtomicUsize,
}

impl DaemonState {
    /// The state of a daemon that starts now, whose handoff tickets last `handoff_ttl`.
    pub(crate) fn new(
        service: ProcessService,
        registration: Registration,
        handoff_ttl: Duration,
        first_request_timeout: Duration,
    ) -> Arc<DaemonState> {
        let ownership = Ownership::with_handoff_ttl(Instant::now(), handoff_ttl);
        DaemonState::with_ownership(service, registration, ownership, first_request_timeout)
    }

    /// The state of a daemon whose ownership is `ownership` (as an upgrade's predecessor handed it on).
    pub(crate) fn with_ownership(
        service: ProcessService,
        registration: Registration,
        ownership: Ownership,
        first_request_timeout: Duration,
    ) -> Arc<DaemonState> {
        Arc::new(DaemonState {
            service,
            registration,
            first_request_timeout,
            ownership: Mutex::new(ownership),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            upgrade: Mutex::new(None),
            upgrading: AtomicBool::new(false),
            connections: Mutex::new(HashMap::new()),
            connection_ended: Condvar::new(),
            next_connection: AtomicU64::new(0),
            unauthenticated: Budget::new(MAX_UNAUTHENTICATED_BYTES),
            authenticated: Budget::new(MAX_AUTHENTICATED_PARTIAL_BYTES),
            held: AtomicUsize::new(0),
        })
    }

    /// The budget frames of `kind` draw on.
    pub(crate) fn budget(&self, kind: Kind) -> &Budget {
        match kind {
            Kind::Unauthenticated => &self.unauthenticated,
            Kind::Authenticated => &self.authenticated,
        }
    }

    /// Counts one more held connection (a subscription or a `wait`) for as long as the returned guard lives;
    /// `None` when [`MAX_HELD_CONNECTIONS`] are held already.
    pub(crate) fn hold(&self) -> Option<Held<'_>> {
        let counted = self
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < MAX_HELD_CONNECTIONS).then_some(n + 1));
        counted.ok().map(|_| Held { state: self })
    }

    /// The ownership state, locked. Whoever changes it calls [`Self::notify`].
    pub(crate) fn ownership(&self) -> MutexGuard<'_, Ownership> {
        self.ownership.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes the supervisor to look at ownership again.
    pub(crate) fn notify(&self) {
        self.changed.notify_all();
    }

    /// Starts an orderly stop (shutdown request, signal, owner loss).
    pub(crate) fn stop(&self) {
        self.ownership().stop();
        self.stopping.store(true, Ordering::Release);
        self.notify();
    }

    /// Whether the daemon is stopping.
    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Whether the daemon stopped because no owner claimed it in time.
    pub(crate) fn never_claimed(&self) -> bool {
        self.ownership().was_never_claimed()
    }

    /// Blocks until the daemon must stop (asked to, or an ownership deadline passed) or an upgrade was asked
    /// for. At the stop, an upgrade still waiting is dropped (its owner is told the daemon is stopping).
    pub(crate) fn wait_for_event(&self) -> Wakeup {
        let mut ownership = self.ownership();
        loop {
            if self.is_stopping() || ownership.tick(Instant::now()) {
                drop(ownership);
                self.stop();
                drop(self.pending_upgrade().take());
                return Wakeup::Stop;
            }
            if let Some(pending) = self.pending_upgrade().take() {
                return Wakeup::Upgrade(pending);
            }
            ownership = match ownership.next_deadline() {
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    self.changed.wait_timeout(ownership, left).unwrap_or_else(|e| e.into_inner()).0
                }
                None => self.changed.wait(ownership).unwrap_or_else(|e| e.into_inner()),
            };
        }
    }

    fn pending_upgrade(&self) -> MutexGuard<'_, Option<Pending>> {
        self.upgrade.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the owner of `generation` may ask for an upgrade now, as [`Self::request_upgrade`] decides it
    /// (without deciding it): asked before the preflight, so that neither a superseded owner nor a second upgrade
    /// starts one.
    pub(crate) fn may_upgrade(&self, generation: u64) -> Result<(), &'static str> {
        let ownership = self.ownership();
        if self.is_stopping() {
            return Err(DAEMON_STOPPING);
        }
        if !ownership.is_owner(generation) {
            return Err(super::router::SUPERSEDED);
        }
        if self.is_upgrading() {
            return Err(UPGRADE_UNDER_WAY);
        }
        Ok(())
    }

    /// Hands an upgrade the owner of `generation` asked for to the main thread, unless the daemon stops, that
    /// owner was superseded, or an upgrade is under way already; decided under the ownership lock, so no claim
    /// slips in ([`Self::is_upgrading`] refuses claims from now on).
    pub(crate) fn request_upgrade(&self, generation: u64, pending: Pending) -> Result<(), &'static str> {
        let ownership = self.ownership();
        if self.is_stopping() {
            return Err(DAEMON_STOPPING);
        }
        if !ownership.is_owner(generation) {
            return Err(super::router::SUPERSEDED);
        }
        if self.upgrading.swap(true, Ordering::AcqRel) {
            return Err(UPGRADE_UNDER_WAY);
        }
        *self.pending_upgrade() = Some(pending);
        drop(ownership);
        self.notify();
        Ok(())
    }

    /// Whether an upgrade is under way (from the owner's request until it fell back); ask under the ownership
    /// lock to decide a claim.
    pub(crate) fn is_upgrading(&self) -> bool {
        self.upgrading.load(Ordering::Acquire)
    }

    /// The upgrade fell back: this image serves on, and takes claims again.
    pub(crate) fn upgrade_fell_back(&self) {
        self.upgrading.store(false, Ordering::Release);
    }

    /// Registers an accepted connection until the returned guard drops (when its handler returns or unwinds),
    /// or says why it cannot be served.
    pub(crate) fn register(&self, stream: &Arc<UnixStream>) -> Result<Registered<'_>, &'static str> {
        let mut connections = self.connections.lock().unwrap_or_else(|e| e.into_inner());
        if self.is_stopping() {
            return Err(DAEMON_STOPPING);
        }
        if connections.len() >= MAX_CONNECTIONS {
            return Err(TOO_MANY_CONNECTIONS);
        }
        let id = self.next_connection.fetch_add(1, Ordering::Relaxed);
        connections.insert(id, Connection { stream: stream.clone(), role: Role::Requests });
        if self.is_upgrading() {
            // Accepted as the upgrade stops accepting: quiesced like the others (see `quiesce_requests`).
            let _ = stream.shutdown(std::net::Shutdown::Read);
        }
        Ok(Registered { state: self, id })
    }

    fn connections(&self) -> MutexGuard<'_, HashMap<u64, Connection>> {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn unregister(&self, id: u64) {
        // (Called once per registered connection, by `Registered`'s drop.)
        self.connections().remove(&id);
        self.connection_ended.notify_all();
    }

    /// Shuts every open connection down (both directions), so no handler stays blocked on its socket.
    pub(crate) fn close_connections(&self) {
        self.close_connections_but(None);
    }

    /// Shuts every open connection but `kept` down (both directions).
    pub(crate) fn close_connections_but(&self, kept: Option<&Arc<UnixStream>>) {
        for connection in self.connections().values() {
            if !kept.is_some_and(|kept| Arc::ptr_eq(kept, &connection.stream)) {
                let _ = connection.stream.shutdown(std::net::Shutdown::Both);
            }
        }
    }

    /// Waits (at most `bound`) until every connection handler has finished.
    pub(crate) fn wait_connections(&self, bound: Duration) -> bool {
        self.wait_until(bound, |connections| connections.is_empty())
    }

    /// An upgrade's first quiesce: shuts the reading side of every connection but `kept` (the owner's) and the
    /// subscriptions, so each answers the request it is carrying out, and the one its client had sent already
    /// (still readable), with a whole frame and ends, a `wait` ends without an answer, and a client that sends
    /// after this is told at once that its request was not taken (its write fails); then waits (at most
    /// `bound`) until only `kept` and the subscriptions are left. The subscriptions go on until the capture ends
    /// them after their last frame. A connection registered while the upgrade is under way is quiesced as it
    /// registers.
    pub(crate) fn quiesce_requests(&self, kept: &Arc<UnixStream>, bound: Duration) -> bool {
        let others =
            |connection: &Connection| connection.role == Role::Requests && !Arc::ptr_eq(kept, &connection.stream);
        for connection in self.connections().values().filter(|connection| others(connection)) {
            let _ = connection.stream.shutdown(std::net::Shutdown::Read);
        }
        self.wait_until(bound, |connections| !connections.values().any(others))
    }

    /// Waits (at most `bound`) until no connection is left but `kept`.
    pub(crate) fn wait_connections_but(&self, kept: &Arc<UnixStream>, bound: Duration) -> bool {
        self.wait_until(bound, |connections| connections.values().all(|c| Arc::ptr_eq(kept, &c.stream)))
    }

    /// Waits (at most `bound`) until `done` holds of the open connections.
    fn wait_until(&self, bound: Duration, done: impl Fn(&HashMap<u64, Connection>) -> bool) -> bool {
        let deadline = Instant::now() + bound;
        let mut connections = self.connections();
        while !done(&connections) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            connections = self.connection_ended.wait_timeout(connections, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        true
    }
}

/// One held connection counted; dropping it gives its place back.
#[derive(Debug)]
pub(crate) struct Held<'a> {
    state: &'a DaemonState,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.state.held.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A registered connection; dropping it (when its handler returns or unwinds) unregisters it.
#[derive(Debug)]
pub(crate) struct Registered<'a> {
    state: &'a DaemonState,
    id: u64,
}

impl Registered<'_> {
    /// The connection streams a subscription from now on: an upgrade's quiesce leaves it to the capture.
    pub(crate) fn streams_subscription(&self) {
        if let Some(connection) = self.state.connections().get_mut(&self.id) {
            connection.role = Role::Subscription;
        }
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.state.unregister(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terminal::TerminalConfig;

    #[test]
    fn the_refusals_name_the_bounds() {
        assert!(TOO_MANY_CONNECTIONS.contains(&MAX_CONNECTIONS.to_string()));
        assert!(TOO_MANY_HELD.contains(&format!("at most {MAX_HELD_CONNECTIONS} subscriptions")));
        assert!(TOO_MANY_HELD.contains(&format!("keeping {CONNECTION_RESERVE} connections")));
    }

    #[test]
    fn a_connection_handler_that_panics_still_frees_its_slot() {
        let registration = Registration {
            features: Vec::new(),
            instance_id: "0123456789abcdef".into(),
            pid: std::process::id(),
            protocol: opencode_pty_protocol::PROTOCOL_VERSION,
            socket: "/nonexistent/server-test.sock".into(),
            token: "fedcba9876543210fedcba9876543210".into(),
        };
        let service = ProcessService::new(TerminalConfig::default());
        let state = DaemonState::new(service, registration, Duration::from_secs(120), Duration::from_secs(10));
        let (ours, _theirs) = UnixStream::pair().expect("a socket pair");
        let registered = state.register(&Arc::new(ours)).expect("a free slot");
        let handler = std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    let _registered = registered;
                    panic!("a handler that fails");
                })
                .join()
        });
        assert!(handler.is_err(), "the handler panicked");
        assert!(state.wait_connections(Duration::ZERO), "its connection is no longer counted");
    }
}
