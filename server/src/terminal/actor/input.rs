//! What the terminal waits for (SPEC I1–I6): the detector's last answer (`procinfo::input_wait`, from the line
//! discipline and what the foreground group is blocked in), the `input_changed` events of the subscribers that
//! asked for them, and when to look again.
//!
//! Nothing is looked at on a timer of its own. A look happens when a request asks for `input` (`get`, `list`,
//! `snapshot`, `read_rows`, a `subscribe` with `events: ["input"]`), and, while a subscriber asked for
//! `input_changed`, after the terminal's own activity: output from the child or input to it. Then the
//! terminal is looked at [`INPUT_CHECK_DELAYS`] after the last of it (1, 4, 16, 64, 256 and 1024 ms), and at
//! least every [`INPUT_CHECK_MAX_DELAY`] while the activity goes on. A terminal that has been quiet for a
//! second is not looked at again until something happens to it, just as the foreground process is only
//! looked at when a request asks: an idle terminal costs nothing, with or without subscribers.

use std::time::{Duration, Instant};

use opencode_pty_protocol::{InputWait, ProcessInfo, Response};

use super::Actor;
use crate::process::{Event, OptIns};
use crate::procinfo::{self, ForegroundGroup};

/// When the terminal is looked at again after its last output or input, while a subscriber asked for
/// `input_changed`: a program usually starts (or stops) reading within a few milliseconds of what it printed
/// or read, so the looks start close and spread out; the last is a second after the activity.
pub const INPUT_CHECK_DELAYS: [Duration; 6] = [
    Duration::from_millis(1),
    Duration::from_millis(4),
    Duration::from_millis(16),
    Duration::from_millis(64),
    Duration::from_millis(256),
    Duration::from_millis(1024),
];

/// While output or input goes on without a pause of [`INPUT_CHECK_DELAYS`]' first step, the terminal is still
/// looked at this often (100 ms): a program that prints without stopping may read the terminal between its
/// writes (a progress display that takes keys).
pub const INPUT_CHECK_MAX_DELAY: Duration = Duration::from_millis(100);

/// What the actor knows about the terminal's waiting for input, and when it looks next.
#[derive(Debug, Default)]
pub(super) struct InputWatch {
    /// The detector's last answer (`None`: not waiting, or never looked at).
    seen: Option<procinfo::InputWait>,
    /// The value last sent in `input_changed` (or that the subscribers were attached with).
    reported: Option<InputWait>,
    /// The last output or input, while the looks after it are not over.
    activity: Option<Instant>,
    /// Which of [`INPUT_CHECK_DELAYS`] comes next.
    step: usize,
    /// When the look now due was first asked for by activity (it is not put off past
    /// [`INPUT_CHECK_MAX_DELAY`] after this).
    asked_at: Option<Instant>,
    /// When to look next, if at all.
    next: Option<Instant>,
}

impl InputWatch {
    /// Output or input happened at `now`: look again soon.
    pub(super) fn activity(&mut self, now: Instant) {
        self.activity = Some(now);
        self.step = 0;
        let asked_at = *self.asked_at.get_or_insert(now);
        self.next = Some((now + INPUT_CHECK_DELAYS[0]).min(asked_at + INPUT_CHECK_MAX_DELAY));
    }

    /// When the next look is due.
    pub(super) fn next(&self) -> Option<Instant> {
        self.next
    }

    /// A scheduled look happened: the one after it, if any is left.
    fn looked(&mut self) {
        self.asked_at = None;
        self.step += 1;
        self.next = self.activity.and_then(|at| Some(at + *INPUT_CHECK_DELAYS.get(self.step)?));
        if self.next.is_none() {
            self.activity = None;
        }
    }

    /// No subscriber asks any more: no looks are scheduled.
    fn stop(&mut self) {
        (self.activity, self.asked_at, self.next, self.step) = (None, None, None, 0);
    }
}

/// The wire value of a detector's answer.
fn wire(wait: procinfo::InputWait) -> InputWait {
    match wait {
        procinfo::InputWait::Password => InputWait::Password,
        procinfo::InputWait::Line => InputWait::Line,
        procinfo::InputWait::Key => InputWait::Key,
    }
}

/// `info` as a request that opted into `opt_ins` sees it: the members of the features it did not name left
/// out, and those of the features it named present (even in info published before anything was looked at).
pub(crate) fn for_opt_ins(mut info: ProcessInfo, opt_ins: OptIns) -> ProcessInfo {
    if let Some(pty) = &mut info.pty {
        if !opt_ins.commands {
            pty.shell = None;
        }
        if opt_ins.input {
            pty.input.get_or_insert(None);
            pty.alternate_screen.get_or_insert(false);
        } else {
            (pty.input, pty.alternate_screen) = (None, None);
        }
    }
    info
}

impl Actor {
    /// What the terminal waits for, as `pty.input` reports it.
    pub(super) fn input_value(&self) -> Option<InputWait> {
        if self.shell_waits_for_command() {
            return Some(InputWait::Prompt);
        }
        self.input.seen.map(wire)
    }

    /// True while shell integration's marks say the shell waits for a command at its prompt, which `input` then
    /// reports as `prompt` over what the detector sees (a shell's line editor reads keys). A change of the
    /// shell's state calls [`Self::input_may_have_changed`], so that subscribers hear of it in order with the
    /// output around it.
    fn shell_waits_for_command(&self) -> bool {
        self.shell_at_prompt()
    }

    /// What the subscribers that asked for `input_changed` were last told (a new one is attached with it).
    pub(super) fn input_reported(&self) -> Option<InputWait> {
        self.input.reported
    }

    /// Whether every byte the child wrote before now has been through the output path: none waits in the PTY,
    /// in the reader's hands, in its queue, or for a turn. Checked in that order, the order a byte takes, so a
    /// byte on its way is seen wherever it is.
    fn caught_up_with_child(&self) -> bool {
        !self.parts.master.has_output()
            && !self.parts.reader_holds.get()
            && self.reader_queue.is_empty()
            && self.held.is_none()
    }

    /// Whether any subscriber asked for `input_changed`.
    pub(super) fn input_watched(&self) -> bool {
        self.fanout.iter().any(|subscriber| subscriber.events.input)
    }

    /// Output or input happened: schedule looks after it, when someone listens.
    pub(super) fn input_activity(&mut self, now: Instant) {
        if self.input_watched() {
            self.input.activity(now);
        }
    }

    /// A scheduled look, when it is due (the actor's loop calls this before it waits, and after a wait that
    /// ended at the deadline).
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    pub(super) fn look_at_input_if_due(&mut self, now: Instant) {
        if self.input.next.is_some_and(|at| now >= at) {
            self.input.looked();
            if self.input_watched() {
                self.look_at_input();
            } else {
                self.input.stop();
            }
        }
    }

    /// Looks at what the terminal waits for now, and tells the subscribers that asked when it changed.
    pub(super) fn look_at_input(&mut self) {
        let parts = &self.parts;
        let group = procinfo::foreground_group(parts.master.fd(), parts.tty.as_deref(), parts.pid);
        self.input_seen_in(group.as_ref());
    }

    /// [`Self::look_at_input`] with the foreground group just found (`None`: there is none).
    pub(super) fn input_seen_in(&mut self, group: Option<&ForegroundGroup>) {
        let parts = &self.parts;
        self.input.seen = group.and_then(|group| procinfo::input_wait(parts.master.fd(), parts.tty.as_deref(), group));
        self.input_may_have_changed();
    }

    /// Sends `input_changed` to the subscribers that asked for it when [`Self::input_value`] differs from what
    /// they were last told, after the output before it: only once the actor has read everything the child wrote
    /// before the look (a prompt printed, then the read), else at a later look, which the output still to come
    /// schedules when it arrives.
    pub(super) fn input_may_have_changed(&mut self) {
        let value = self.input_value();
        if value == self.input.reported || !self.caught_up_with_child() {
            return;
        }
        self.input.reported = value;
        if self.input_watched() {
            self.flush();
            self.publish_info();
            let event = Event::message(Response::InputChanged { input: value });
            let removed = self.fanout.publish_where(&event, self.controller.as_deref(), |s| s.events.input);
            if !removed.is_empty() {
                self.detached(removed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_activity_the_looks_spread_out_and_stop_after_a_second() {
        let start = Instant::now();
        let mut watch = InputWatch::default();
        assert_eq!(watch.next(), None, "never looked at before anything happens");
        watch.activity(start);
        let mut looks = Vec::new();
        while let Some(at) = watch.next() {
            looks.push(at - start);
            watch.looked();
        }
        assert_eq!(looks, INPUT_CHECK_DELAYS, "one look per delay after the activity, then none");
        // New activity starts over.
        let later = start + Duration::from_secs(5);
        watch.activity(later);
        assert_eq!(watch.next(), Some(later + INPUT_CHECK_DELAYS[0]));
    }

    #[test]
    fn steady_activity_is_looked_at_every_max_delay() {
        let start = Instant::now();
        let mut watch = InputWatch::default();
        let mut looks = Vec::new();
        // Output every half millisecond for a second: the first delay never passes without activity.
        for step in 0..2000 {
            let now = start + Duration::from_micros(500 * step);
            if watch.next().is_some_and(|at| now >= at) {
                looks.push(now - start);
                watch.looked();
            }
            watch.activity(now);
        }
        assert_eq!(looks.len(), 9, "{looks:?}");
        for pair in looks.windows(2) {
            assert!(pair[1] - pair[0] <= INPUT_CHECK_MAX_DELAY + Duration::from_millis(1), "{looks:?}");
        }
    }

    #[test]
    fn opt_ins_decide_the_members() {
        let spec = crate::terminal::tests::sh("true");
        let mut info = super::super::initial_info(1, 2, 3, &spec);
        let plain = for_opt_ins(info.clone(), OptIns::NONE);
        let pty = plain.pty.as_ref().unwrap();
        assert_eq!((pty.input, pty.alternate_screen), (None, None));
        let asked = for_opt_ins(info.clone(), OptIns { input: true, ..OptIns::NONE });
        let pty = asked.pty.as_ref().unwrap();
        assert_eq!((pty.input, pty.alternate_screen), (Some(None), Some(false)), "present before any look");
        let pty = info.pty.as_mut().unwrap();
        (pty.input, pty.alternate_screen) = (Some(Some(InputWait::Key)), Some(true));
        let stripped = for_opt_ins(info, OptIns::NONE);
        let pty = stripped.pty.as_ref().unwrap();
        assert_eq!((pty.input, pty.alternate_screen), (None, None), "left out when not asked for");
    }
}
