//! The request router: every frame a client sends, on an ordinary connection or on the owner channel, is
//! decided here by one `match` into an [`Outcome`] (a reply, a subscription to stream, a wait to hold, an owner
//! channel to serve, a stop). The router talks to the process service and the ownership state; it never touches
//! a socket. `connection.rs` reads the frames and carries the outcomes out.

use std::time::Instant;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use opencode_pty_protocol::{MAX_INPUT_BYTES, PROTOCOL_VERSION, Request, Response};

use super::frames::Incoming;
use super::ownership::OwnershipError;
use super::state::DaemonState;
use super::subscription::Held;
use crate::error::ServiceError;
use crate::pipe::PipeSpec;
use crate::process::{ExistingController, OptIns, ProcessSubscription, SubscribeRequest};
use crate::terminal::PtySpec;

/// The answer to anything a superseded owner channel sends (SPEC O4); the channel closes after it.
pub(crate) const SUPERSEDED: &str = "owner connection has been superseded";

/// The answer to a request the owner channel does not carry (SPEC O3).
const OWNER_CHANNEL_ONLY: &str = "owner connection only accepts prepare_handoff or shutdown";

/// The answer to `upgrade` from anything but the current owner channel, as `prepare_handoff`'s.
const UPGRADE_NEEDS_OWNER: &str = "upgrade requires the owner connection";

/// The answer to an output frame sent where a request envelope belongs (SPEC N1).
const NOT_AN_ENVELOPE: &str = "expected a request envelope, got an output frame";

/// The connection a frame came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Channel {
    /// A connection that has not claimed the daemon: it carries one request.
    Ordinary,
    /// The owner channel of ownership `generation`: it carries requests until it closes or is superseded.
    Owner {
        /// The claim's generation (see `Ownership`).
        generation: u64,
    },
}

/// What the connection does with one frame.
#[derive(Debug)]
pub(crate) enum Outcome<'a> {
    /// Write this response, then close the connection.
    Reply(Response),
    /// Write this response on the owner channel, then read its next request.
    ReplyAndRead(Response),
    /// Write `attached` and the process's events until the subscription ends (`subscription::serve_subscription`).
    Stream {
        /// The process subscribed to.
        id: u64,
        /// What keeps the subscription attached.
        subscription: ProcessSubscription,
    },
    /// Hold the connection until a wait is answered (`subscription::hold_wait`): a pipe process's exit, or a
    /// terminal's command.
    Hold {
        /// The process waited on.
        id: u64,
        /// Its registered waiter.
        waiter: Held,
    },
    /// Write `owned`, then serve the owner channel of this claim; the claim is given up when it is dropped.
    OwnerChannel(OwnerClaim<'a>),
    /// Write `ok`, then stop the daemon.
    Stop,
    /// Check the program, then upgrade the daemon in place (`daemon::upgrading`): the answer is `ok` from the
    /// new image, or an error from this one, which serves on; the owner channel reads on either way.
    Upgrade {
        /// The owner channel's generation.
        generation: u64,
        /// The program asked for (absent: the daemon's own executable as it is on disk now).
        program: Option<String>,
    },
}

/// A successful `own`: while it lives, its connection is (or was, until superseded) the owner channel.
/// Dropping it disconnects that owner, which may stop the daemon or start a handoff's wait (SPEC O5).
#[derive(Debug)]
pub(crate) struct OwnerClaim<'a> {
    state: &'a DaemonState,
    generation: u64,
}

impl<'a> OwnerClaim<'a> {
    /// The claim of generation `generation` an upgrade's predecessor handed on with its owner connection.
    pub(crate) fn resumed(state: &'a DaemonState, generation: u64) -> OwnerClaim<'a> {
        OwnerClaim { state, generation }
    }

    /// The channel this claim serves.
    pub(crate) fn channel(&self) -> Channel {
        Channel::Owner { generation: self.generation }
    }
}

impl Drop for OwnerClaim<'_> {
    fn drop(&mut self) {
        self.state.ownership().disconnect(self.generation);
        self.state.notify();
    }
}

/// Decides what one frame from `channel` gets. On the owner channel a superseded owner is told so first,
/// whatever it sent; a refused envelope is answered and the owner channel reads on, an output frame closes
/// any connection.
pub(crate) fn route(state: &DaemonState, incoming: Incoming, channel: Channel) -> Outcome<'_> {
    if let Channel::Owner { generation } = channel
        && !state.ownership().is_owner(generation)
    {
        return Outcome::Reply(error(SUPERSEDED));
    }
    let request = match incoming {
        Incoming::Request(request) => request,
        Incoming::OutputFrame => return Outcome::Reply(error(NOT_AN_ENVELOPE)),
        Incoming::Refused(message) => return answer(channel, error(message)),
    };
    let service = &state.service;
    match (channel, request) {
        (Channel::Owner { generation }, Request::PrepareHandoff) => prepare_handoff(state, generation),
        (Channel::Owner { generation }, Request::Shutdown) => owner_shutdown(state, generation),
        (Channel::Owner { generation }, Request::Upgrade { program }) => Outcome::Upgrade { generation, program },
        (Channel::Owner { .. }, _) => Outcome::ReplyAndRead(error(OWNER_CHANNEL_ONLY)),
        (Channel::Ordinary, Request::Ping) => Outcome::Reply(pong(state)),
        (Channel::Ordinary, Request::Own { instance_id, ticket }) => own(state, &instance_id, ticket.as_deref()),
        (Channel::Ordinary, Request::PrepareHandoff) => Outcome::Reply(error(OwnershipError::NotOwner.to_string())),
        (Channel::Ordinary, Request::Shutdown) => Outcome::Stop,
        (Channel::Ordinary, Request::Upgrade { .. }) => Outcome::Reply(error(UPGRADE_NEEDS_OWNER)),
        (Channel::Ordinary, Request::Subscribe { id, offset, attachment_id, role, takeover, events }) => {
            let existing_controller = ExistingController::from_takeover(takeover);
            let request = crate::bounds::check_opt_ins("events", &events).map(|()| SubscribeRequest {
                offset,
                attachment: attachment_id,
                role,
                existing_controller,
                events: OptIns::from_wire(&events),
            });
            match request.and_then(|request| subscribe(state, id, request)) {
                Ok(subscription) => Outcome::Stream { id, subscription },
                Err(refused) => Outcome::Reply(error(refused.to_string())),
            }
        }
        (Channel::Ordinary, Request::Wait { id }) => match service.pipe(id) {
            Ok(pipe) => Outcome::Hold { id, waiter: Held::Exit(pipe.wait()) },
            Err(refused) => Outcome::Reply(error(refused.to_string())),
        },
        (Channel::Ordinary, request @ Request::CreatePty { .. }) => {
            let spec = PtySpec::from_request(request).expect("the pattern matched create_pty");
            reply(service.create_pty(spec).map(|process| Response::Created { process }))
        }
        (Channel::Ordinary, Request::CreatePipe { program, args, cwd, env, group_id, output_path, metadata }) => {
            let spec =
                PipeSpec { program, args, cwd: cwd.into(), env, group_id, output_path: output_path.into(), metadata };
            reply(service.create_pipe(spec).map(|process| Response::Created { process }))
        }
        (Channel::Ordinary, Request::List { mode, features, after, limit }) => {
            reply(opt_ins(&features).map(|opt_ins| {
                // Paged when either member is there (SPEC D17); a request without them gets every process, no `next`.
                let limit = limit.map(|limit| usize::try_from(limit.get()).unwrap_or(usize::MAX));
                let (processes, next) = service.list_page(mode, opt_ins, after, limit);
                Response::Processes { processes, next }
            }))
        }
        (Channel::Ordinary, Request::Get { id, features }) => reply(
            opt_ins(&features)
                .and_then(|opt_ins| service.get_with(id, opt_ins))
                .map(|process| Response::Process { process }),
        ),
        (Channel::Ordinary, Request::Write { id, attachment_id, data_base64 }) => {
            done(decode_input(&data_base64).and_then(|data| service.pty(id)?.write(attachment_id, data)))
        }
        (Channel::Ordinary, Request::Resize { id, attachment_id, cols, rows }) => {
            done(service.pty(id).and_then(|pty| pty.resize(attachment_id, cols.get(), rows.get())))
        }
        (Channel::Ordinary, Request::Control { id, attachment_id, cols, rows }) => {
            done(service.pty(id).and_then(|pty| pty.control(attachment_id, cols.get(), rows.get())))
        }
        (Channel::Ordinary, Request::Input { id, attachment_id, cols, rows, data_base64 }) => done(
            decode_input(&data_base64)
                .and_then(|data| service.pty(id)?.input(attachment_id, cols.get(), rows.get(), data)),
        ),
        (Channel::Ordinary, Request::Snapshot { id, features }) => {
            reply(opt_ins(&features).and_then(|opt_ins| service.pty(id)?.snapshot_with(opt_ins)))
        }
        (Channel::Ordinary, Request::Commands { id, limit }) => {
            reply(service.pty(id).and_then(|pty| pty.commands(limit.map(|l| l.get()))))
        }
        (Channel::Ordinary, Request::ReadRows { id, rows, features }) => reply(
            opt_ins(&features).and_then(|opt_ins| service.pty(id)?.read_rows_with(rows.map(|r| r.get()), opt_ins)),
        ),
        (Channel::Ordinary, Request::Run { id, command, timeout_ms }) => {
            match service.pty(id).and_then(|pty| pty.run(command, timeout_ms)) {
                Ok(wait) => Outcome::Hold { id, waiter: Held::Command(wait) },
                Err(refused) => Outcome::Reply(error(refused.to_string())),
            }
        }
        (Channel::Ordinary, Request::WaitCommand { id, command_id, timeout_ms }) => {
            match service.pty(id).and_then(|pty| pty.wait_command(command_id, timeout_ms)) {
                Ok(wait) => Outcome::Hold { id, waiter: Held::Command(wait) },
                Err(refused) => Outcome::Reply(error(refused.to_string())),
            }
        }
        (Channel::Ordinary, Request::Rename { id, title }) => done(service.pty(id).and_then(|pty| pty.rename(title))),
        (Channel::Ordinary, Request::Replay { id, offset }) => reply(replay(state, id, offset)),
        (Channel::Ordinary, Request::Terminate { id }) => done(service.terminate(id)),
        (Channel::Ordinary, Request::Signal { id, signal }) => {
            done(service.pipe(id).and_then(|pipe| pipe.signal(signal)))
        }
        (Channel::Ordinary, Request::SetMetadata { id, metadata }) => {
            done(service.pipe(id).and_then(|pipe| pipe.set_metadata(metadata)))
        }
    }
}

/// A request's `features`, bounded (SPEC B2).
fn opt_ins(features: &[opencode_pty_protocol::OptIn]) -> Result<OptIns, ServiceError> {
    crate::bounds::check_opt_ins("features", features)?;
    Ok(OptIns::from_wire(features))
}

fn error(message: impl Into<String>) -> Response {
    Response::Error { message: message.into() }
}

/// One answer that leaves the channel as it was: the owner channel reads on, an ordinary connection closes.
fn answer(channel: Channel, response: Response) -> Outcome<'static> {
    match channel {
        Channel::Ordinary => Outcome::Reply(response),
        Channel::Owner { .. } => Outcome::ReplyAndRead(response),
    }
}

/// An ordinary request's answer: its response, or `error` with the service's message.
fn reply(result: Result<Response, ServiceError>) -> Outcome<'static> {
    Outcome::Reply(result.unwrap_or_else(|refused| error(refused.to_string())))
}

/// An ordinary request's answer when it has nothing to say but that it was done: `ok`, or `error`.
fn done(result: Result<(), ServiceError>) -> Outcome<'static> {
    reply(result.map(|()| Response::Ok))
}

fn pong(state: &DaemonState) -> Response {
    let registration = &state.registration;
    Response::Pong {
        features: registration.features.clone(),
        instance_id: registration.instance_id.clone(),
        pid: registration.pid,
        protocol: PROTOCOL_VERSION,
    }
}

/// `own` (SPEC O1, O2): the instance, then the stop, then the claim.
fn own<'a>(state: &'a DaemonState, instance_id: &str, ticket: Option<&str>) -> Outcome<'a> {
    if instance_id != state.registration.instance_id {
        return Outcome::Reply(error("daemon instance_id mismatch"));
    }
    if state.is_stopping() {
        return Outcome::Reply(error("daemon is stopping"));
    }
    let claimed = {
        // Under the ownership lock, as an upgrade is asked for: a claim never slips into an upgrade.
        let mut ownership = state.ownership();
        if state.is_upgrading() {
            return Outcome::Reply(error(super::state::UPGRADING));
        }
        ownership.claim(ticket, Instant::now())
    };
    state.notify();
    match claimed {
        Ok(generation) => Outcome::OwnerChannel(OwnerClaim { state, generation }),
        Err(refused) => Outcome::Reply(error(refused.to_string())),
    }
}

/// `prepare_handoff` on the owner channel (SPEC O3).
fn prepare_handoff(state: &DaemonState, generation: u64) -> Outcome<'static> {
    let prepared = state.ownership().prepare(
        generation,
        Instant::now(),
        crate::time::now_ms(),
        crate::daemon::runtime::random_hex,
    );
    state.notify();
    Outcome::ReplyAndRead(match prepared {
        Ok(handoff) => Response::Handoff { ticket: handoff.ticket, expires_at: handoff.expires_at },
        Err(refused) => error(refused.to_string()),
    })
}

/// `shutdown` on the owner channel. Decided under the ownership lock, so a claim cannot slip in between `ok`
/// and the stop.
fn owner_shutdown(state: &DaemonState, generation: u64) -> Outcome<'static> {
    let mut ownership = state.ownership();
    if !ownership.is_owner(generation) {
        return Outcome::Reply(error(SUPERSEDED));
    }
    ownership.stop();
    Outcome::Stop
}

/// Attaches to process `id`, PTY or pipe.
fn subscribe(state: &DaemonState, id: u64, request: SubscribeRequest) -> Result<ProcessSubscription, ServiceError> {
    state.service.process(id)?.subscribe(request)
}

/// `replay` of either kind.
fn replay(state: &DaemonState, id: u64, offset: u64) -> Result<Response, ServiceError> {
    let read = state.service.process(id)?.replay(offset)?;
    Ok(Response::Replay {
        requested_offset: read.requested,
        available_offset: read.available,
        end_offset: read.end,
        truncated: read.truncated,
        data_base64: BASE64.encode(&read.bytes),
    })
}

/// Decodes `data_base64` of `write` and `input`, at most [`MAX_INPUT_BYTES`].
fn decode_input(data: &str) -> Result<Vec<u8>, ServiceError> {
    // Four base64 characters carry three bytes: refuse an oversized payload before decoding it.
    if data.len() / 4 * 3 > MAX_INPUT_BYTES + 3 {
        return Err(ServiceError::invalid(format!("input is over the {MAX_INPUT_BYTES}-byte limit")));
    }
    let bytes =
        BASE64.decode(data).map_err(|e| ServiceError::invalid(format!("data_base64 is not valid base64: {e}")))?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(ServiceError::invalid(format!("input is over the {MAX_INPUT_BYTES}-byte limit")));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests;
