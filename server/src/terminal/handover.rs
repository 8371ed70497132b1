//! A terminal handed over by an in-place upgrade (issue 30): [`PtyHandle::begin_capture`] and
//! [`PtyHandle::finish_capture`] stop its threads at a consistent point and take its state, leaving the PTY master open and the child running (and unreaped);
//! [`PtyHandle::restore`] starts new threads around the same master and child from that state, in the
//! successor (or in the same daemon, when the upgrade falls back).

use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded, select};

use super::actor::Restored;
use super::actor::handover::{CaptureRequest, Captured, HandoverRequest, restored_info, spec_from_state};
use super::rebuild::{Rebuilder, ScreenBytes};
use super::start::Start;
use super::{PtyHandle, TerminalConfig, shell};
use crate::error::ServiceError;
use crate::process::session::Reach;
use crate::procinfo::stat::proc_stat;
use crate::upgrade::{Blob, ChildState, TerminalState};

/// How long a capture waits for the terminal's actor to hand over its state (it answers after the step it is
/// in; only an actor the machine does not schedule takes long). Past it the terminal is ended as by
/// `terminate`, since its threads have been told to stop.
pub(crate) const CAPTURE_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a capture waits for the terminal's actor to prepare its screen (`actor/screen_file.rs`) before it
/// asks for the capture all the same (the actor answers in order: a late preparation is still used).
pub(crate) const PREPARE_TIMEOUT: Duration = Duration::from_secs(5);

/// A terminal's state and the descriptors it names, the PTY master and its screen file, which must stay open
/// (across `execve`, for the successor) until the terminal is restored.
#[derive(Debug)]
pub(crate) struct CapturedTerminal {
    pub(crate) state: TerminalState,
    pub(crate) master: OwnedFd,
    pub(crate) screen: Option<OwnedFd>,
}

/// A capture asked of a terminal's actor ([`PtyHandle::begin_capture`]), to finish with
/// [`PtyHandle::finish_capture`].
#[derive(Debug)]
pub(crate) struct Capturing {
    /// The stop channel's sender, dropped once the actor has answered (or failed to).
    stop: Sender<()>,
    /// Where the state comes (`None`: the actor had stopped).
    answer: Option<Receiver<Result<Captured, ServiceError>>>,
    deadline: Instant,
}

impl PtyHandle {
    /// Before a capture: asks the actor to prepare its screen while the terminal runs on; the answer comes when
    /// it has, with the bytes it wrote (`None`: the actor has stopped).
    pub(crate) fn prepare_capture(&self) -> Option<Receiver<u64>> {
        let (done, prepared) = bounded(1);
        self.capture.try_send(HandoverRequest::Prepare(done)).ok().map(|()| prepared)
    }

    /// The first step of a capture: asks the actor for its state (its reader and writer stop). Fails, changing
    /// nothing, for a terminal already stopped. [`Self::finish_capture`] must follow; the two steps let many
    /// terminals capture at once.
    pub(crate) fn begin_capture(&self) -> Result<Capturing, ServiceError> {
        let Some((stop, stop_pipe)) = self.stop.lock().unwrap_or_else(|e| e.into_inner()).take() else {
            return Err(ServiceError::Gone(self.id));
        };
        self.handback.capture();
        let (reply, answer) = bounded(1);
        // Room for the one request a terminal ever gets; full or gone only when the actor has stopped.
        let asked = self.capture.try_send(HandoverRequest::Capture(CaptureRequest { stop_pipe, reply })).is_ok();
        Ok(Capturing { stop, answer: asked.then_some(answer), deadline: Instant::now() + CAPTURE_TIMEOUT })
    }

    /// The second step: the terminal's state, once its threads have ended. Its threads stop without touching
    /// its child or its PTY: every byte read from the PTY is in the ring (what the child writes from now on
    /// waits in the PTY), the input not yet written is in the state, and the child's exit, if it happens
    /// meanwhile, is left for the successor's watch (the child is never reaped here). Subscribers' channels end
    /// after what they were sent. From then on the handle is inert: dropping it ends nothing. A terminal whose
    /// actor does not answer within [`CAPTURE_TIMEOUT`] is ended.
    pub(crate) fn finish_capture(&self, capturing: Capturing) -> Result<CapturedTerminal, ServiceError> {
        let Capturing { stop, answer, deadline } = capturing;
        let captured = match answer {
            Some(answer) => select! {
                recv(answer) -> captured => captured.unwrap_or(Err(ServiceError::Gone(self.id))),
                default(deadline.saturating_duration_since(Instant::now())) => {
                    Err(ServiceError::Timeout { id: self.id, seconds: CAPTURE_TIMEOUT.as_secs() })
                }
            },
            None => Err(ServiceError::Gone(self.id)),
        };
        // The actor has stopped (or is told to now); the writer ends once the input's delivery has.
        drop(stop);
        let Captured { mut state, master, screen } = match captured {
            Ok(captured) => captured,
            Err(error) => {
                tracing::error!(id = self.id, %error, "a terminal could not be captured: it is ended");
                crate::process::session::hang_up(self.pid);
                self.end_session(Instant::now() + self.hangup_grace);
                self.finish_stop();
                return Err(error);
            }
        };
        self.threads.join_all();
        // What the writer could not write comes before what the actor still held.
        let mut input = self.handback.take();
        input.extend_from_slice(&state.pending_input.0);
        state.pending_input = Blob(input);
        state.child = ChildState {
            pid: self.pid,
            session: self.session.map(|reach| reach.session),
            start: self.session.map(|reach| reach.start),
        };
        let launch = self.shell.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let (Some(shell), Some(launch)) = (&mut state.shell, launch) {
            shell.script = Some(launch.keep());
        }
        Ok(CapturedTerminal { state, master, screen })
    }

    /// The terminal `state` describes, around `master` (the descriptor the state names) and the same child,
    /// with new threads: the emulator from its snapshot, the ring with its offsets (a subscriber from any offset
    /// gets exactly the bytes after it), the controller's attachment id and generation, the lifecycle (an
    /// `exited` already published is not published again; an exit not yet seen is seen by the new watch), and
    /// the bytes that were on their way. Refused, leaving the child alone, when the child is not the one the
    /// state names (another start time); a failure after that ends the child.
    /// Its emulator is made by `rebuilder` (or its actor), off the terminal's way (`rebuild.rs`); `screen` is the
    /// screen file the state names. Its threads start once `gate` (if any) closes.
    pub(crate) fn restore(
        mut state: TerminalState,
        master: OwnedFd,
        screen: Option<OwnedFd>,
        config: TerminalConfig,
        rebuilder: &mut Rebuilder,
        gate: Option<Receiver<()>>,
    ) -> Result<PtyHandle, ServiceError> {
        let id = state.id;
        let pid = state.child.pid;
        let found = proc_stat(pid);
        let session = match (state.child, &found) {
            (ChildState { session: Some(session), start: Some(start), .. }, Some(stat)) => {
                if stat.start != start {
                    return Err(ServiceError::system(
                        format!("cannot restore terminal {id}"),
                        format!("pid {pid} is not its child any more"),
                    ));
                }
                Some(Reach { pgid: pid, session, start })
            }
            (_, None) => {
                return Err(ServiceError::system(
                    format!("cannot restore terminal {id}"),
                    format!("pid {pid} is gone"),
                ));
            }
            // Its start time was unknown when it was captured: its group is all it has.
            (_, Some(_)) => None,
        };
        let spec = spec_from_state(&state.spec);
        let launch = state
            .shell
            .as_ref()
            .and_then(|shell| shell.script.clone().map(|path| shell::Launch::adopt(shell.nonce.clone(), path)));
        let last_info = restored_info(&state, &spec);
        let screen = Arc::new(ScreenBytes::take(&mut state, screen));
        let pending = rebuilder.add(&state, screen.clone());
        let start = Start {
            id,
            pid,
            started_at: state.started_at,
            last_info,
            spec,
            master,
            tty: state.tty.clone(),
            launch,
            session,
            replay_bytes: state.replay.capacity,
            scrollback_lines: state.scrollback_lines,
            restored: Some(Restored { state: Box::new(state), screen, pending }),
            gate,
        };
        PtyHandle::start(start, config)
    }
}
