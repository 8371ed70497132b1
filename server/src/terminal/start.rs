//! How a terminal starts: a new child in a new PTY ([`PtyHandle::spawn`]), or one handed over by an upgrade
//! (`handover.rs`), and then, either way, its threads around the PTY master ([`PtyHandle::start`]).

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

use crossbeam_channel::{Receiver, bounded};
use opencode_pty_protocol::ProcessInfo;

use super::command::Command;
use super::writer::WriterStart;
use super::{
    ACTOR_QUEUE_COMMANDS, OUTPUT_QUEUE_CHUNKS, PtyHandle, PtySpec, TerminalConfig, WRITER_QUEUE_CHUNKS, actor, io,
    shell, spawn,
};
use crate::error::ServiceError;
use crate::process::session::Reach;
use crate::process::threads::Threads;
use crate::process::{Child, delivery};
use crate::procinfo::stat::proc_stat;

/// What a terminal's threads start from: its child in its PTY, new or handed over (see [`PtyHandle::start`]).
pub(super) struct Start {
    pub(super) id: u64,
    pub(super) pid: u32,
    pub(super) started_at: u64,
    pub(super) spec: PtySpec,
    /// The PTY master (non-blocking, close-on-exec).
    pub(super) master: OwnedFd,
    pub(super) tty: Option<std::path::PathBuf>,
    pub(super) launch: Option<shell::Launch>,
    pub(super) session: Option<Reach>,
    pub(super) replay_bytes: usize,
    pub(super) scrollback_lines: usize,
    /// What the handle publishes before the actor runs.
    pub(super) last_info: ProcessInfo,
    /// The state an upgrade's predecessor captured.
    pub(super) restored: Option<super::actor::Restored>,
    /// For a terminal an upgrade restored: its actor and reader start once this closes (every process of the
    /// state is restored), so that terminals already restored do not compete for the processor with the rest
    /// of the restore. `None`: at once.
    pub(super) gate: Option<Receiver<()>>,
}

/// Waits until `gate` (if any) closes, or the terminal is stopped first.
fn through(gate: Option<&Receiver<()>>, stop: &Receiver<()>) {
    if let Some(gate) = gate {
        crossbeam_channel::select! {
            recv(gate) -> _ => {}
            recv(stop) -> _ => {}
        }
    }
}

impl PtyHandle {
    /// Starts `spec` in a new PTY with threads named `opencode-pty-<role>-<id>`.
    pub fn spawn(id: u64, spec: PtySpec, config: TerminalConfig) -> Result<PtyHandle, ServiceError> {
        let launch = match (spec.shell_integration, &config.shell_dir) {
            (false, _) => None,
            (true, None) => {
                return Err(ServiceError::invalid("shell integration needs the daemon's runtime directory"));
            }
            (true, Some(dir)) => {
                spawn::validate(&spec)?;
                let zdotdir = shell::child_zdotdir(&spec.env, &config.withheld_env);
                Some(shell::prepare(dir, id, &spec.program, &spec.args, zdotdir.as_deref())?)
            }
        };
        let spawned = spawn::spawn(&spec, &config.withheld_env, launch.as_ref())?;
        let started_at = crate::time::now_ms();
        let pid = spawned.pid;
        // The child is not reaped before `terminate`, so this is its own start time.
        let session = proc_stat(pid).map(|stat| Reach { pgid: pid, session: stat.session, start: stat.start });
        let last_info = actor::initial_info(id, pid, started_at, &spec);
        // The terminal's own bounds, else the daemon's.
        let replay_bytes = spec.replay_bytes.map_or(config.replay_bytes, |bytes| bytes as usize);
        let scrollback_lines = spec.scrollback_lines.map_or(config.scrollback_lines, |lines| lines as usize);
        let start = Start {
            id,
            pid,
            started_at,
            spec,
            master: spawned.master,
            tty: spawned.tty,
            launch,
            session,
            replay_bytes,
            scrollback_lines,
            last_info,
            restored: None,
            gate: None,
        };
        PtyHandle::start(start, config)
    }

    /// Starts the threads of a terminal whose child runs in its PTY (new, or handed over by an upgrade's
    /// predecessor): its actor, its reader and its child's watch; the actor starts the writer once input must
    /// wait (`writer.rs`). A failure kills and reaps the child: it is never left behind.
    pub(super) fn start(start: Start, config: TerminalConfig) -> Result<PtyHandle, ServiceError> {
        let Start { id, pid, started_at, spec, master, tty, launch, session, replay_bytes, scrollback_lines, .. } =
            start;
        // The reader's output has ended already for a terminal handed over after it did.
        let reads = start.restored.as_ref().is_none_or(|restored| !restored.state.life.output_ended);
        let (commands, commands_rx) = bounded(ACTOR_QUEUE_COMMANDS);
        let (output, output_rx) = bounded(OUTPUT_QUEUE_CHUNKS);
        // Each chunk is written as it is queued (no gathering): a keystroke's echo waits for nothing.
        let (input, input_rx) = delivery::channel(WRITER_QUEUE_CHUNKS, 0);
        let (stop_tx, stop) = bounded::<()>(0);
        // Room for an upgrade's two requests: prepare, then capture.
        let (capture, capture_rx) = bounded(2);
        // From here on a failure must not leave the child behind.
        let child = Child::new(pid);
        let abandon = |error: ServiceError| {
            child.kill_and_reap();
            error
        };
        // Close-on-exec, so no other child of the daemon keeps the stop pipe open.
        let (stop_pipe_read, stop_pipe_write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
            .map_err(|e| abandon(ServiceError::system("cannot create a pipe", e)))?;
        let dup = |fd: &OwnedFd| fd.try_clone().map_err(|e| ServiceError::system("cannot duplicate", e));
        let (reader_fd, writer_fd) = (dup(&master).map_err(abandon)?, dup(&master).map_err(abandon)?);
        let (reader_stop, writer_stop) = (dup(&stop_pipe_read).map_err(abandon)?, stop_pipe_read);
        let last_info = Arc::new(Mutex::new(start.last_info));
        let (exit_tx, exit_rx) = bounded(1);
        let master = Arc::new(io::PtyMaster::new(master));
        input_rx.offer(master.clone());
        let reader_holds = io::ReaderHolds::default();
        let handback = io::Handback::default();
        let mut parts = Box::new(actor::ActorParts {
            id,
            spec,
            pid,
            started_at,
            master,
            tty,
            replay_bytes,
            scrollback_lines,
            compact_after: config.compact_after,
            commands: commands.clone(),
            input,
            stop: stop.clone(),
            last_info: last_info.clone(),
            turns: config.turns.clone(),
            shell_nonce: launch.as_ref().map(|launch| launch.nonce.clone()),
            reader_holds: reader_holds.clone(),
            capture: capture_rx,
            restored: start.restored,
            writer: None,
        });
        let handle = PtyHandle {
            id,
            pid,
            commands: commands.clone(),
            stop: Mutex::new(Some((stop_tx, stop_pipe_write))),
            threads: Arc::new(Threads::default()),
            last_info,
            stopped: stop.clone(),
            session,
            hangup_grace: config.hangup_grace,
            capture,
            handback: handback.clone(),
            shell: Mutex::new(launch),
        };
        let threads = &handle.threads;
        parts.writer = Some(WriterStart {
            threads: threads.clone(),
            id,
            master: writer_fd,
            stop_pipe: writer_stop,
            input: input_rx,
            commands: commands.clone(),
            stop: stop.clone(),
            handback,
        });
        let result = (|| {
            let (gate, s) = (start.gate.clone(), stop.clone());
            threads.start("", "actor", id, move || {
                through(gate.as_ref(), &s);
                actor::run(parts, commands_rx, output_rx, exit_rx)
            })?;
            if reads {
                let (gate, s) = (start.gate, stop.clone());
                threads.start("", "reader", id, move || {
                    through(gate.as_ref(), &s);
                    io::reader(reader_fd, reader_stop, output, s, reader_holds)
                })?;
            }
            child.watch(threads, id, move |end| {
                let report = match end {
                    Ok(exit) => Command::ChildExited(exit),
                    Err(error) => Command::WaitFailed(format!("waiting for the child failed: {error}")),
                };
                // Never full (the one report); fails only when the actor has stopped.
                let _ = exit_tx.try_send(report);
            })
        })();
        if let Err(error) = result {
            handle.terminate();
            return Err(error);
        }
        Ok(handle)
    }
}
