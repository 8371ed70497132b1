//! Ownership and restart handoff, as a state machine with time passed in: a new daemon must be claimed within
//! [`OWNER_DEADLINE`]; losing the owner stops it unless a handoff was prepared on that owner's channel; a
//! handoff ticket lasts [`HANDOFF_TTL`] and a valid one replaces even a connected owner.

use std::time::{Duration, Instant};

use opencode_pty_protocol::OWNER_DEADLINE;

use crate::upgrade::{HandoffState, OwnerPhase, OwnerState};

/// Why a claim or a handoff was refused. The `Display` text is what the client is told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OwnershipError {
    /// A claim without a ticket while an owner is connected (or was, and left a handoff).
    #[error("{}", opencode_pty_protocol::ALREADY_OWNED)]
    LiveOwner,
    /// The daemon is stopping (its deadline passed or it was shut down).
    #[error("daemon ownership deadline expired or daemon is stopping")]
    Stopped,
    /// The ticket is wrong, was used already, or expired.
    #[error("invalid handoff ticket")]
    BadTicket,
    /// `prepare_handoff` from anything but the current owner channel.
    #[error("handoff requires the owner connection")]
    NotOwner,
}

/// A prepared handoff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Handoff {
    /// The secret a successor passes to `own`.
    pub ticket: String,
    /// When it expires, in milliseconds since the Unix epoch.
    pub expires_at: u64,
    deadline: Instant,
}

/// Where the ownership is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Phase {
    /// Not claimed yet; stops at the deadline.
    Starting(Instant),
    /// Claimed; the owner may have prepared a handoff.
    Owned(Option<Handoff>),
    /// The owner left after preparing a handoff; stops when it expires.
    Waiting(Handoff),
    /// The daemon must stop.
    Stopped,
}

/// The ownership of one daemon. Each successful claim gets a new generation; a connection is the owner
/// channel while its generation is the current one and the daemon is owned.
#[derive(Debug)]
pub(crate) struct Ownership {
    phase: Phase,
    generation: u64,
    handoff_ttl: Duration,
    /// Whether the daemon stopped because nobody claimed it in time.
    never_claimed: bool,
}

impl Ownership {
    /// A daemon started at `now`, waiting for its first owner, with the protocol's deadlines.
    #[cfg(test)]
    pub(crate) fn new(now: Instant) -> Ownership {
        Ownership::with_handoff_ttl(now, opencode_pty_protocol::HANDOFF_TTL)
    }

    /// The same with another handoff lifetime (the daemon's hidden `--handoff-ttl-ms`, for tests).
    pub(crate) fn with_handoff_ttl(now: Instant, handoff_ttl: Duration) -> Ownership {
        Ownership { phase: Phase::Starting(now + OWNER_DEADLINE), generation: 0, handoff_ttl, never_claimed: false }
    }

    /// Applies the deadlines that passed by `now`; true when the daemon must stop.
    pub(crate) fn tick(&mut self, now: Instant) -> bool {
        self.phase = match std::mem::replace(&mut self.phase, Phase::Stopped) {
            Phase::Starting(deadline) if now >= deadline => {
                self.never_claimed = true;
                Phase::Stopped
            }
            Phase::Waiting(handoff) if now >= handoff.deadline => Phase::Stopped,
            // An expired handoff is cancelled; the connected owner keeps the daemon.
            Phase::Owned(Some(handoff)) if now >= handoff.deadline => Phase::Owned(None),
            other => other,
        };
        self.phase == Phase::Stopped
    }

    /// Whether the daemon stopped because no owner claimed it within [`OWNER_DEADLINE`].
    pub(crate) fn was_never_claimed(&self) -> bool {
        self.never_claimed
    }

    /// The next moment [`Self::tick`] may change something.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        match &self.phase {
            Phase::Starting(deadline) => Some(*deadline),
            Phase::Owned(Some(handoff)) | Phase::Waiting(handoff) => Some(handoff.deadline),
            Phase::Owned(None) | Phase::Stopped => None,
        }
    }

    /// Claims the daemon: without a ticket only a never-claimed one, with a ticket one whose prepared handoff
    /// it matches (replacing a connected owner). Returns the new owner's generation.
    pub(crate) fn claim(&mut self, ticket: Option<&str>, now: Instant) -> Result<u64, OwnershipError> {
        if self.tick(now) {
            return Err(OwnershipError::Stopped);
        }
        let accepted = match (&self.phase, ticket) {
            (Phase::Starting(_), None) => true,
            (Phase::Owned(Some(handoff)) | Phase::Waiting(handoff), Some(ticket)) => {
                constant_time_eq(handoff.ticket.as_bytes(), ticket.as_bytes())
            }
            (Phase::Owned(_) | Phase::Waiting(_), None) => return Err(OwnershipError::LiveOwner),
            _ => false,
        };
        if !accepted {
            return Err(OwnershipError::BadTicket);
        }
        self.generation += 1;
        self.phase = Phase::Owned(None);
        Ok(self.generation)
    }

    /// Whether the connection that claimed `generation` is the owner channel now.
    pub(crate) fn is_owner(&self, generation: u64) -> bool {
        generation == self.generation && matches!(self.phase, Phase::Owned(_))
    }

    /// Prepares (or returns the already prepared) handoff for the owner `generation`. `ticket` is used only
    /// when none is prepared; `wall_ms` is the current time in milliseconds since the Unix epoch.
    pub(crate) fn prepare(
        &mut self,
        generation: u64,
        now: Instant,
        wall_ms: u64,
        ticket: impl FnOnce() -> String,
    ) -> Result<Handoff, OwnershipError> {
        self.tick(now);
        if !self.is_owner(generation) {
            return Err(OwnershipError::NotOwner);
        }
        let Phase::Owned(prepared) = &mut self.phase else { return Err(OwnershipError::NotOwner) };
        let handoff = prepared.get_or_insert_with(|| Handoff {
            ticket: ticket(),
            expires_at: wall_ms + duration_ms(self.handoff_ttl),
            deadline: now + self.handoff_ttl,
        });
        Ok(handoff.clone())
    }

    /// The owner channel of `generation` closed. A superseded channel changes nothing; the current owner's
    /// leaves the daemon waiting for its successor if it prepared a handoff, and stops it otherwise.
    pub(crate) fn disconnect(&mut self, generation: u64) {
        if !self.is_owner(generation) {
            return;
        }
        self.phase = match std::mem::replace(&mut self.phase, Phase::Stopped) {
            Phase::Owned(Some(handoff)) => Phase::Waiting(handoff),
            _ => Phase::Stopped,
        };
    }

    /// Stops the daemon (shutdown, a signal).
    pub(crate) fn stop(&mut self) {
        self.phase = Phase::Stopped;
    }

    /// Whether the daemon must stop.
    #[cfg(test)]
    pub(crate) fn is_stopped(&self) -> bool {
        self.phase == Phase::Stopped
    }
}

impl Ownership {
    /// What an in-place upgrade's state carries of the ownership at `now`: the generation, the phase, and each
    /// deadline as the time it has left. `None` once the daemon must stop (nothing to hand on).
    pub(crate) fn to_upgrade(&self, now: Instant) -> Option<OwnerState> {
        let left = |deadline: Instant| duration_ms(deadline.saturating_duration_since(now));
        let handoff = |handoff: &Handoff| HandoffState {
            ticket: handoff.ticket.clone(),
            expires_at: handoff.expires_at,
            left_ms: left(handoff.deadline),
        };
        let phase = match &self.phase {
            Phase::Starting(deadline) => OwnerPhase::Starting { left_ms: left(*deadline) },
            Phase::Owned(prepared) => OwnerPhase::Owned { handoff: prepared.as_ref().map(handoff) },
            Phase::Waiting(prepared) => OwnerPhase::Waiting { handoff: handoff(prepared) },
            Phase::Stopped => return None,
        };
        Some(OwnerState { generation: self.generation, phase })
    }

    /// The ownership an upgrade's state carries, at `now`: the same owner generation (its connection stays the
    /// owner channel), and a prepared handoff valid until its own deadline.
    pub(crate) fn from_upgrade(state: &OwnerState, now: Instant, handoff_ttl: Duration) -> Ownership {
        let handoff = |handoff: &HandoffState| Handoff {
            ticket: handoff.ticket.clone(),
            expires_at: handoff.expires_at,
            deadline: now + Duration::from_millis(handoff.left_ms.min(duration_ms(handoff_ttl))),
        };
        let phase = match &state.phase {
            OwnerPhase::Starting { left_ms } => {
                Phase::Starting(now + Duration::from_millis((*left_ms).min(duration_ms(OWNER_DEADLINE))))
            }
            OwnerPhase::Owned { handoff: prepared } => Phase::Owned(prepared.as_ref().map(handoff)),
            OwnerPhase::Waiting { handoff: prepared } => Phase::Waiting(handoff(prepared)),
        };
        Ownership { phase, generation: state.generation, handoff_ttl, never_claimed: false }
    }
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Compares two secrets in time that depends only on their lengths.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    // `black_box` keeps the optimiser from turning the fold back into a loop that stops at the first difference.
    a.iter().zip(b).fold(0u8, |acc, (x, y)| std::hint::black_box(acc | (x ^ y))) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencode_pty_protocol::HANDOFF_TTL;

    fn ticket() -> String {
        "t1".to_owned()
    }

    #[test]
    fn an_unclaimed_daemon_stops_at_the_deadline() {
        let start = Instant::now();
        let mut ownership = Ownership::new(start);
        assert!(!ownership.tick(start + OWNER_DEADLINE - Duration::from_millis(1)));
        assert_eq!(ownership.next_deadline(), Some(start + OWNER_DEADLINE));
        assert!(!ownership.was_never_claimed());
        assert!(ownership.tick(start + OWNER_DEADLINE));
        assert!(ownership.was_never_claimed(), "the stop says why");
        assert_eq!(ownership.claim(None, start + OWNER_DEADLINE), Err(OwnershipError::Stopped));
    }

    #[test]
    fn the_first_claim_wins_and_a_second_is_refused() {
        let now = Instant::now();
        let mut ownership = Ownership::new(now);
        let first = ownership.claim(None, now).unwrap();
        assert!(ownership.is_owner(first));
        assert_eq!(ownership.claim(None, now), Err(OwnershipError::LiveOwner));
        assert_eq!(ownership.claim(Some("guess"), now), Err(OwnershipError::BadTicket));
        assert!(!ownership.tick(now + OWNER_DEADLINE * 10), "an owned daemon has no deadline");
    }

    #[test]
    fn losing_the_owner_without_a_handoff_stops() {
        let now = Instant::now();
        let mut ownership = Ownership::new(now);
        let owner = ownership.claim(None, now).unwrap();
        ownership.disconnect(owner);
        assert!(ownership.is_stopped());
    }

    #[test]
    fn a_handoff_is_repeated_unchanged_and_consumed_by_the_successor() {
        let now = Instant::now();
        let mut ownership = Ownership::new(now);
        let owner = ownership.claim(None, now).unwrap();
        let handoff = ownership.prepare(owner, now, 1_000, ticket).unwrap();
        assert_eq!(handoff.expires_at, 1_000 + 120_000);
        let again = ownership.prepare(owner, now + Duration::from_secs(5), 6_000, || "other".into()).unwrap();
        assert_eq!(again, handoff, "same ticket and deadline, not renewed");
        // A valid ticket replaces the connected owner.
        let successor = ownership.claim(Some("t1"), now).unwrap();
        assert!(ownership.is_owner(successor) && !ownership.is_owner(owner));
        // The superseded owner can neither prepare nor stop the daemon by leaving.
        assert_eq!(ownership.prepare(owner, now, 0, ticket), Err(OwnershipError::NotOwner));
        ownership.disconnect(owner);
        assert!(ownership.is_owner(successor));
        // The ticket was consumed.
        assert_eq!(ownership.claim(Some("t1"), now), Err(OwnershipError::BadTicket));
    }

    #[test]
    fn after_the_owner_leaves_with_a_handoff_the_daemon_waits_until_expiry() {
        let now = Instant::now();
        let mut ownership = Ownership::new(now);
        let owner = ownership.claim(None, now).unwrap();
        ownership.prepare(owner, now, 0, ticket).unwrap();
        ownership.disconnect(owner);
        assert!(!ownership.is_stopped());
        assert_eq!(ownership.claim(None, now), Err(OwnershipError::LiveOwner));
        assert!(ownership.tick(now + HANDOFF_TTL), "an unclaimed handoff stops the daemon when it expires");
    }

    #[test]
    fn an_expired_handoff_only_cancels_for_a_connected_owner() {
        let now = Instant::now();
        let mut ownership = Ownership::new(now);
        let owner = ownership.claim(None, now).unwrap();
        ownership.prepare(owner, now, 0, ticket).unwrap();
        assert!(!ownership.tick(now + HANDOFF_TTL));
        assert!(ownership.is_owner(owner));
        assert_eq!(ownership.claim(Some("t1"), now + HANDOFF_TTL), Err(OwnershipError::BadTicket));
        // Cancelled: leaving now stops the daemon, and a new prepare gives a new ticket.
        let fresh = ownership.prepare(owner, now + HANDOFF_TTL, 0, || "t2".into()).unwrap();
        assert_eq!(fresh.ticket, "t2");
    }

    #[test]
    fn only_the_owner_prepares() {
        let now = Instant::now();
        let mut ownership = Ownership::new(now);
        assert_eq!(ownership.prepare(0, now, 0, ticket), Err(OwnershipError::NotOwner));
        let owner = ownership.claim(None, now).unwrap();
        assert_eq!(ownership.prepare(owner + 1, now, 0, ticket), Err(OwnershipError::NotOwner));
    }

    #[test]
    fn an_upgrade_hands_on_the_owner_and_a_prepared_ticket_until_its_own_deadline() {
        let now = Instant::now();
        let mut ownership = Ownership::new(now);
        let owner = ownership.claim(None, now).unwrap();
        let handoff = ownership.prepare(owner, now, 1_000, ticket).unwrap();
        let later = now + Duration::from_secs(20);
        let state = ownership.to_upgrade(later).expect("an owner to hand on");
        let restored_at = Instant::now();
        let mut successor = Ownership::from_upgrade(&state, restored_at, HANDOFF_TTL);
        assert!(successor.is_owner(owner), "the same owner channel");
        let again = successor.prepare(owner, restored_at, 99_000, || "other".into()).unwrap();
        assert_eq!((again.ticket.as_str(), again.expires_at), ("t1", handoff.expires_at), "the same ticket");
        assert!(!successor.tick(restored_at + HANDOFF_TTL - Duration::from_secs(21)), "still valid");
        assert_eq!(successor.next_deadline(), Some(restored_at + HANDOFF_TTL - Duration::from_secs(20)));
        let claimed = successor.claim(Some("t1"), restored_at).unwrap();
        assert!(successor.is_owner(claimed));
        // A daemon that must stop has nothing to hand on.
        ownership.stop();
        assert_eq!(ownership.to_upgrade(later), None);
    }

    #[test]
    fn secrets_compare_by_content_and_length() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
