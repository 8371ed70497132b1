//! The actor's requests (each a [`Command`] from the terminal's queue or the wait thread): held back while the
//! controller is stalled, dropped when their requester gave up, else carried out one at a time, in order with
//! the output (the pending output goes out first).

use std::time::Instant;

use opencode_pty_protocol::Response;

use super::Actor;
use super::control::Pace;
use crate::error::ServiceError;
use crate::process::ExitStatus;
use crate::terminal::command::Command;

impl Actor {
    /// A command from the queue: carried out now, or held back (in order; bounded, since no more commands are
    /// taken when [`MAX_DEFERRED_COMMANDS`](super::MAX_DEFERRED_COMMANDS) wait) while the controller is stalled.
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    pub(super) fn take(&mut self, command: Command, pace: Pace) {
        if pace == Pace::Stalled && !command.bypasses_stalled_controller() {
            self.deferred.push_back(command);
        } else {
            self.command(command);
        }
    }

    /// Carries out one command, in order (see [`Self::in_order`]). A request whose requester gave up waiting is
    /// dropped unanswered (an `Info` still refreshes the foreground process).
    #[inline(never)] // a step's frame lies below the wait's (see `Actor::run`)
    pub(super) fn command(&mut self, command: Command) {
        if command.expired(Instant::now()) {
            // A refresh changes nothing a client asked for: done all the same, so the next `get` or `list` that
            // cannot wait for this actor shows it.
            if let Command::Info { opt_ins, .. } = command {
                self.in_order(|actor| actor.refresh(opt_ins));
            }
            return;
        }
        self.in_order(|actor| actor.handle(command));
    }

    /// One ordered step that is not output: the pending output goes out first, subscribers that went away are
    /// detached, then `step` runs, and the info is published.
    pub(super) fn in_order(&mut self, step: impl FnOnce(&mut Self)) {
        self.flush();
        self.prune_dropped();
        step(self);
        self.publish_info();
    }

    fn handle(&mut self, command: Command) {
        match command {
            Command::WriterFailed(message) => self.fail(message),
            Command::WaitFailed(message) => {
                self.fail(message);
                self.life.child_ended(ExitStatus { exit_code: None, signal: None });
                self.maybe_exited();
            }
            Command::ChildExited(exit) => {
                self.life.child_ended(exit);
                self.maybe_exited();
            }
            Command::Write { attachment, data, reply } => {
                let result = self.authorize(attachment.as_deref()).and_then(|()| self.queue_input(data));
                reply.send(result);
            }
            Command::Resize { attachment, cols, rows, reply } => {
                let result = self.authorize(attachment.as_deref()).and_then(|()| self.resize(cols, rows));
                reply.send(result);
            }
            Command::Control { attachment, cols, rows, reply } => {
                reply.send(self.control(&attachment, cols, rows));
            }
            Command::Input { attachment, cols, rows, data, reply } => {
                let result = self.control(&attachment, cols, rows).and_then(|()| self.queue_input(data));
                reply.send(result);
            }
            Command::Rename { title, reply } => {
                if let Some(title) = self.titles.set_user(title) {
                    self.emit(Response::TitleChanged { title });
                }
                reply.send(Ok(()));
            }
            Command::Snapshot { opt_ins, reply } => {
                reply.send(self.snapshot(opt_ins));
            }
            Command::ReadRows { rows, opt_ins, reply } => {
                reply.send(self.read_rows(rows, opt_ins));
            }
            Command::Commands { limit, reply } => {
                reply.send(self.commands(limit));
            }
            Command::Run { command, waiter, reply } => {
                reply.send(self.run_command(&command, waiter));
            }
            Command::EndOf { command_id, waiter, reply } => {
                reply.send(self.wait_command(command_id, waiter));
            }
            Command::Replay { offset, reply } => {
                reply.send(self.replay.read_from(offset).map_err(ServiceError::from));
            }
            Command::Subscribe { offset, attachment, role, existing_controller, events, reply } => {
                reply.send(self.subscribe(offset, attachment, role, existing_controller, events));
            }
            Command::Detach { key } => {
                if let Some(subscriber) = self.fanout.remove(key) {
                    self.detached(vec![subscriber]);
                }
            }
            Command::Info { opt_ins, reply } => {
                self.refresh(opt_ins);
                reply.send(Ok(self.info_for(opt_ins)));
            }
            #[cfg(test)]
            Command::Compaction { reply } => {
                let thread = nix::unistd::gettid().as_raw();
                reply.send(Ok(super::CompactionCounts { thread, ..self.compaction.counts() }))
            }
        }
    }
}
