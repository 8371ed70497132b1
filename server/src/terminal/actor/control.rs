//! The actor's subscriptions and its controller: attaching a subscriber (its `attached` and live events in one
//! step), who may write and resize, promotion and takeover, and who controls once the controller goes.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use opencode_pty_protocol::{ProcessInfo, Response, Role};

use super::Actor;
use crate::error::{ALREADY_CONTROLLED, ServiceError};
use crate::process::{Event, ExistingController, OptIns, ProcessSubscription, ReplayRead};
use crate::terminal::fanout::Subscriber;

/// How the controller keeps up with its events (a stalled controller is also behind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pace {
    /// Its channel has room, or there is no controller: everything proceeds.
    Keeping,
    /// Events are held for it: output waits, which is its backpressure on the reader and the child.
    Behind,
    /// It holds as much as it may: requests wait too, except those that bypass a stalled controller.
    Stalled,
}

impl Actor {
    /// `write` and `resize` need the controller's attachment; without a controller, a null one is allowed.
    pub(super) fn authorize(&self, attachment: Option<&str>) -> Result<(), ServiceError> {
        match (&self.controller, attachment) {
            (None, None) => Ok(()),
            (Some(controller), Some(attachment)) if controller == attachment => Ok(()),
            (Some(_), None) => Err(ServiceError::invalid("terminal input requires the active controller attachment")),
            (_, Some(attachment)) => {
                Err(ServiceError::invalid(format!("attachment {attachment} is not the terminal controller")))
            }
        }
    }

    /// How the controller (if any) keeps up with its events.
    pub(super) fn controller_pace(&self) -> Pace {
        match self.controller.as_deref().and_then(|c| self.fanout.get(c)) {
            Some(controller) if controller.is_stalled() => Pace::Stalled,
            Some(controller) if controller.is_behind() => Pace::Behind,
            _ => Pace::Keeping,
        }
    }

    /// Makes `attachment` the controller (if it is not) and resizes to its size (if that differs).
    ///
    /// A claim needs a subscription, except from the controller itself: after an in-place upgrade the
    /// terminal keeps its controller's attachment id while that client has not subscribed again yet (a
    /// controller whose subscription ends is otherwise demoted at once, in [`Actor::detached`]), and its
    /// input is taken meanwhile. If it never comes back, it stays the controller until another attachment
    /// claims control (`control`, `input`, or `subscribe` with `takeover`).
    pub(super) fn control(&mut self, attachment: &str, cols: u16, rows: u16) -> Result<(), ServiceError> {
        let controls = self.controller.as_deref() == Some(attachment);
        if !controls && self.fanout.get(attachment).is_none() {
            return Err(ServiceError::invalid(format!("attachment {attachment} is not subscribed")));
        }
        if !controls {
            self.promote(Some(attachment.to_owned()));
        }
        if (cols, rows) != (self.cols, self.rows) {
            self.resize(cols, rows)?;
        }
        Ok(())
    }

    /// Changes the controller (demoting the previous one, which stays subscribed) and tells everyone.
    pub(super) fn promote(&mut self, attachment: Option<String>) {
        self.generation += 1;
        if let Some(attachment) = &attachment
            && let Some(subscriber) = self.fanout.get_mut(attachment)
        {
            subscriber.last_control = self.generation;
        }
        self.controller = attachment.clone();
        self.emit(Response::ControllerChanged { attachment_id: attachment, generation: self.generation });
    }

    /// Subscribers that went away; if the controller was among them, the most recent former controller still
    /// subscribed takes over (or nobody, if none ever controlled).
    pub(super) fn detached(&mut self, gone: Vec<Subscriber>) {
        let lost_controller = gone.iter().any(|s| self.controller.as_deref() == Some(s.attachment.as_str()));
        if !lost_controller {
            return;
        }
        let next = self.fanout.iter().filter(|s| s.last_control > 0).max_by_key(|s| s.last_control);
        let next = next.map(|s| s.attachment.clone());
        self.promote(next);
    }

    pub(super) fn prune_dropped(&mut self) {
        let dropped = self.fanout.prune_dropped();
        if !dropped.is_empty() {
            self.detached(dropped);
        }
    }

    /// Attaches a subscriber: `attached` (with the replay from `offset`) is its first event, and live events
    /// continue at the replay's end, because both happen in this one command. A subscriber that asked for
    /// `input_changed` (`events`) is attached with what the terminal waits for now, looked at first.
    pub(super) fn subscribe(
        &mut self,
        offset: u64,
        attachment: String,
        role: Role,
        existing_controller: ExistingController,
        events: OptIns,
    ) -> Result<ProcessSubscription, ServiceError> {
        if role == Role::Controller
            && let Some(controller) = &self.controller
            && *controller != attachment
            && existing_controller == ExistingController::Refuse
        {
            return Err(ServiceError::invalid(format!("{ALREADY_CONTROLLED} {controller}")));
        }
        // Those already listening hear of a change the look finds before this subscriber is attached with it.
        if events.input {
            self.look_at_input();
        }
        let replay = self.replay.read_from(offset)?;
        // Reusing an attachment id replaces its old subscription.
        if let Some(old) = self.fanout.remove_attachment(&attachment) {
            drop(old);
        }
        let (key, subscription) = self.fanout.add(attachment.clone(), role, events, self.parts.commands.clone());
        let becomes_controller = role == Role::Controller && self.controller.as_deref() != Some(attachment.as_str());
        if becomes_controller {
            // Counted now, so `attached` carries the generation after this attach.
            self.generation += 1;
            self.controller = Some(attachment.clone());
            if let Some(subscriber) = self.fanout.get_mut(&attachment) {
                subscriber.last_control = self.generation;
            }
        } else if role == Role::Controller
            && let Some(subscriber) = self.fanout.get_mut(&attachment)
        {
            subscriber.last_control = self.generation;
        }
        let role =
            if self.controller.as_deref() == Some(attachment.as_str()) { Role::Controller } else { Role::Observer };
        let mut process = self.info_for(events);
        // What those listening were told: a change whose output is still on its way comes as an event after it.
        if let Some(pty) = process.pty.as_mut().filter(|_| events.input) {
            pty.input = Some(self.input_reported());
        }
        let attached = attached(process, role, self.generation, replay);
        self.fanout.send_to(key, Event::message(attached));
        // After an exit, `exited` comes right after `attached`, before anything else.
        if let Some(exited) = self.life.published() {
            self.fanout.send_to(key, Event::Message(exited.event.clone()));
        }
        if becomes_controller {
            let changed = Response::ControllerChanged { attachment_id: Some(attachment), generation: self.generation };
            self.emit(changed);
        }
        Ok(subscription)
    }
}

/// The `attached` response for a replay read.
fn attached(process: ProcessInfo, role: Role, generation: u64, replay: ReplayRead) -> Response {
    Response::Attached {
        process,
        role,
        generation,
        requested_offset: replay.requested,
        available_offset: replay.available,
        end_offset: replay.end,
        truncated: replay.truncated,
        replay_base64: BASE64.encode(&replay.bytes),
    }
}
