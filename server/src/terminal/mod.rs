//! One PTY terminal: its threads (actor, reader, the writer once input must wait, and the wait thread of
//! `process::Child`) and the handle the service uses to talk to it. The handle only sends [`Command`]s and
//! waits for replies; all state lives on the actor thread.

mod actor;
#[cfg(test)]
pub(crate) use actor::gate as actor_gate;
mod coalesce;
mod command;
mod fanout;
pub(crate) mod handover;
mod io;
pub(crate) mod rebuild;
pub(crate) mod replay;
pub(crate) mod shell;
mod spawn;
mod start;
pub(crate) mod title;
mod turns;
mod writer;

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded, select};
use opencode_pty_protocol::{ProcessInfo, Response, Role};

pub(crate) use actor::handover::spec_from_state;
pub use actor::{
    COALESCE_TIMER_SLACK_NS, COMPACT_AFTER, INPUT_CHECK_DELAYS, INPUT_CHECK_MAX_DELAY, MAX_COMPACT_STEPS,
    MAX_PENDING_INPUT_BYTES, PRECISE_WAKE_MARGIN,
};
pub use coalesce::PRECISE_FLUSH_BYTES;
pub(crate) use command::CommandWait;
pub use fanout::{
    CONTROLLER_BACKLOG_EVENTS, CONTROLLER_QUEUE_EVENTS, DIRECT_WRITE_BATCH_BYTES, OBSERVER_BACKLOG_BYTES,
    OBSERVER_BACKLOG_EVENTS, OBSERVER_QUEUE_EVENTS,
};
pub(crate) use shell::SHELL_DIR;
pub use spawn::PtySpec;
pub(crate) use spawn::validate;
pub use turns::{FREE_OUTPUT_BURST_BYTES, FREE_OUTPUT_BYTES_PER_SECOND, MAX_OUTPUT_TURNS, TURN_OUTPUT_BYTES, Turns};

use crate::error::ServiceError;
use crate::process::session::{self, HANGUP_GRACE, Reach};
use crate::process::threads::Threads;
use crate::process::{Child, ExistingController, OptIns, ProcessSubscription, ReplayRead};
use command::{Command, Reply};

/// Requests and thread reports queued for one actor before senders wait (each waits within its own timeout).
/// The queue's slots are allocated with the terminal, whether used or not (about 100 bytes each): 32 keeps an
/// idle terminal's share at about 3 KiB (128 took 13 KiB of the 105 an idle terminal cost, issue 31), and a
/// terminal seldom has more than a few requests in flight.
pub(crate) const ACTOR_QUEUE_COMMANDS: usize = 32;

/// Output chunks (of at most 8 KiB) queued from the reader to the actor before the reader, and so the child,
/// waits. A separate queue, so requests are still handled while output is held back.
pub const OUTPUT_QUEUE_CHUNKS: usize = 64;

/// Chunks of input and replies queued for the writer before the actor keeps the rest itself (its pending
/// input, bounded by `MAX_PENDING_INPUT_BYTES`). Like the command queue's, its slots are allocated with the
/// terminal: 8 cost an idle terminal 0.3 KiB where 128 cost 4 (issue 31), and the queue is only used once the
/// PTY has stopped taking input at once (a child that does not read), where 64 KiB in flight to it is as good
/// as 1 MiB.
pub const WRITER_QUEUE_CHUNKS: usize = 8;

/// How long a request waits for its terminal to answer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long `list` and `get` wait for terminals to refresh their info (the foreground process) before they use
/// the last published one: `list` asks them all at once, so it answers within it however many terminals are busy.
/// A refresh asked too late still happens (the actor carries out an expired `Info`), so the next answer shows
/// it. 20 ms was tried (issue 26) and not kept: the conformance transcripts were recorded with 1 s, and 20 ms was
/// not checked against them under load.
pub(crate) const INFO_TIMEOUT: Duration = Duration::from_secs(1);

/// History lines a terminal's emulator keeps by default (the protocol's `DEFAULT_SCROLLBACK_LINES`).
pub(crate) const DEFAULT_SCROLLBACK_LINES: usize = opencode_pty_protocol::DEFAULT_SCROLLBACK_LINES as usize;

/// Sizes of one terminal's buffers, and what of the daemon's environment its child does not get.
#[derive(Debug, Clone)]
pub struct TerminalConfig {
    /// Raw output kept for replay, in bytes.
    pub replay_bytes: usize,
    /// History lines kept by the emulator (an upper bound, enforced a page at a time).
    pub scrollback_lines: usize,
    /// Variables of the daemon's environment kept out of every PTY child (`--withhold-env`); a request's
    /// `env` may still set them.
    pub withheld_env: Arc<[String]>,
    /// The turns at output processing every terminal of the daemon shares (see [`Turns`]).
    pub turns: Turns,
    /// How long a terminal's session has after its hangup before what is left of it is killed: [`HANGUP_GRACE`]
    /// (the daemon's hidden `--hangup-grace-ms` changes it, for tests of the hangup's order on a loaded machine).
    pub hangup_grace: Duration,
    /// Where shell integration scripts are written (the runtime directory's [`SHELL_DIR`]); without it,
    /// `shell_integration` is refused.
    pub shell_dir: Option<std::path::PathBuf>,
    /// How long a terminal must stay quiet before its history and replay ring are compressed
    /// ([`COMPACT_AFTER`]; the daemon's `--compress-after-ms` changes it); `None`: never.
    pub compact_after: Option<Duration>,
    /// The terminals' listing budget in bytes: `MAX_PTY_INFO_BYTES`, or less (the daemon's hidden
    /// `--pty-listing-bytes`, for tests that cross it without starting thousands of shells; never more).
    pub pty_listing_bytes: usize,
}

impl Default for TerminalConfig {
    fn default() -> Self {
        TerminalConfig {
            replay_bytes: replay::DEFAULT_REPLAY_BYTES,
            scrollback_lines: DEFAULT_SCROLLBACK_LINES,
            withheld_env: Arc::new([]),
            turns: Turns::sized_to_machine(),
            hangup_grace: HANGUP_GRACE,
            shell_dir: None,
            compact_after: Some(COMPACT_AFTER),
            pty_listing_bytes: crate::listing::MAX_PTY_INFO_BYTES,
        }
    }
}

/// A running terminal, as the service holds it.
#[derive(Debug)]
pub struct PtyHandle {
    id: u64,
    pid: u32,
    commands: Sender<Command>,
    /// Dropped to stop every thread: the stop channel's only sender and the stop pipe's write end.
    stop: Mutex<Option<(Sender<()>, OwnedFd)>>,
    /// Shared with the actor, which starts the writer among them on demand.
    threads: Arc<Threads>,
    /// The info the actor last published (see [`PtyHandle::last_info`]).
    last_info: Arc<Mutex<ProcessInfo>>,
    /// Disconnected once the terminal stops, which ends any request still waiting.
    stopped: Receiver<()>,
    /// The child's session, ended as a whole when the terminal stops (`None` when `/proc` cannot tell its start
    /// time: then only the child's group is killed).
    session: Option<Reach>,
    /// How long the session has after the hangup (`TerminalConfig::hangup_grace`).
    hangup_grace: Duration,
    /// Where an upgrade's capture is asked of the actor (`handover.rs`).
    capture: Sender<actor::handover::HandoverRequest>,
    /// What the writer hands back when the terminal is captured.
    handback: io::Handback,
    /// The shell integration script, removed when the handle is dropped (after the terminal's stop), or handed
    /// to an upgrade's successor.
    shell: Mutex<Option<shell::Launch>>,
}

impl PtyHandle {
    /// The process id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Sends a command and waits (bounded) for its reply.
    fn request<T>(&self, make: impl FnOnce(Reply<T>) -> Command) -> Result<T, ServiceError> {
        let deadline = Instant::now() + REQUEST_TIMEOUT;
        let answer = self.send_until(deadline, make)?;
        self.answer_by(deadline, &answer)
    }

    /// Queues a command whose reply is awaited until `deadline` (waiting, at most until then, for room in the
    /// actor's queue); the channel its reply comes on.
    fn send_until<T>(
        &self,
        deadline: Instant,
        make: impl FnOnce(Reply<T>) -> Command,
    ) -> Result<Receiver<Result<T, ServiceError>>, ServiceError> {
        let (reply, answer) = bounded(1);
        let reply = Reply::new(reply, deadline);
        // Also ends when the terminal stops: a command still queued then is never answered.
        select! {
            send(self.commands, make(reply)) -> sent => sent.map_err(|_| ServiceError::Gone(self.id))?,
            recv(self.stopped) -> _ => return Err(ServiceError::Gone(self.id)),
            default(deadline.saturating_duration_since(Instant::now())) => return Err(self.timeout()),
        }
        Ok(answer)
    }

    /// Waits until `deadline` for the reply to a command [`Self::send_until`] queued.
    fn answer_by<T>(&self, deadline: Instant, answer: &Receiver<Result<T, ServiceError>>) -> Result<T, ServiceError> {
        select! {
            recv(answer) -> result => match result {
                Ok(result) => result,
                // The actor drops a command it takes after its deadline unanswered (`Reply::expired`): that is
                // this request's timeout, which the actor saw first, not the end of the terminal.
                Err(_) if Instant::now() >= deadline => Err(self.timeout()),
                Err(_) => Err(ServiceError::Gone(self.id)),
            },
            recv(self.stopped) -> _ => Err(ServiceError::Gone(self.id)),
            default(deadline.saturating_duration_since(Instant::now())) => Err(self.timeout()),
        }
    }

    /// A request's timeout (the bound it waited, reported in whole seconds).
    fn timeout(&self) -> ServiceError {
        ServiceError::Timeout { id: self.id, seconds: REQUEST_TIMEOUT.as_secs() }
    }

    /// Raw input; `attachment` must be the controller's, or `None` while there is no controller.
    pub fn write(&self, attachment: Option<String>, data: Vec<u8>) -> Result<(), ServiceError> {
        attachment.as_deref().map_or(Ok(()), crate::bounds::check_attachment)?;
        self.request(|reply| Command::Write { attachment, data, reply })
    }

    /// Resizes (the controller's attachment, or `None` while there is none); always publishes `resized`. A
    /// size out of bounds is refused here, before the terminal sees anything.
    pub fn resize(&self, attachment: Option<String>, cols: u16, rows: u16) -> Result<(), ServiceError> {
        attachment.as_deref().map_or(Ok(()), crate::bounds::check_attachment)?;
        crate::bounds::check_size(cols, rows)?;
        self.request(|reply| Command::Resize { attachment, cols, rows, reply })
    }

    /// Promotes a subscribed attachment and resizes to its size when that differs.
    pub fn control(&self, attachment: String, cols: u16, rows: u16) -> Result<(), ServiceError> {
        crate::bounds::check_attachment(&attachment)?;
        crate::bounds::check_size(cols, rows)?;
        self.request(|reply| Command::Control { attachment, cols, rows, reply })
    }

    /// [`Self::control`], then queues `data`, in one ordered step.
    pub fn input(&self, attachment: String, cols: u16, rows: u16, data: Vec<u8>) -> Result<(), ServiceError> {
        crate::bounds::check_attachment(&attachment)?;
        crate::bounds::check_size(cols, rows)?;
        self.request(|reply| Command::Input { attachment, cols, rows, data, reply })
    }

    /// Sets (or with `None` or empty, clears) the user title.
    pub fn rename(&self, title: Option<String>) -> Result<(), ServiceError> {
        title.as_deref().map_or(Ok(()), crate::bounds::check_title)?;
        self.request(|reply| Command::Rename { title, reply })
    }

    /// A `snapshot` response.
    pub fn snapshot(&self) -> Result<Response, ServiceError> {
        self.snapshot_with(OptIns::NONE)
    }

    /// A `snapshot` response whose `process` carries the members of the features `opt_ins` names.
    pub fn snapshot_with(&self, opt_ins: OptIns) -> Result<Response, ServiceError> {
        self.request(|reply| Command::Snapshot { opt_ins, reply })
    }

    /// A `rows` response.
    pub fn read_rows(&self, rows: Option<u16>) -> Result<Response, ServiceError> {
        self.read_rows_with(rows, OptIns::NONE)
    }

    /// A `rows` response whose `process` carries the members of the features `opt_ins` names.
    pub fn read_rows_with(&self, rows: Option<u16>, opt_ins: OptIns) -> Result<Response, ServiceError> {
        self.request(|reply| Command::ReadRows { rows, opt_ins, reply })
    }

    /// A `commands` answer: the shell's newest `limit` commands (all it keeps by default), for a terminal with
    /// shell integration.
    pub fn commands(&self, limit: Option<u16>) -> Result<Response, ServiceError> {
        let limit = crate::bounds::check_commands_limit(limit)?;
        self.request(|reply| Command::Commands { limit, reply })
    }

    /// `run`: types `command` at the shell's prompt (refused at once unless the shell waits there with
    /// nothing typed); the wait's answer is its end, or `command_running` once `timeout_ms` passed.
    pub(crate) fn run(&self, command: String, timeout_ms: Option<u32>) -> Result<CommandWait, ServiceError> {
        crate::bounds::check_run_command(&command)?;
        let (waiter, wait) = command::command_wait(crate::bounds::command_wait(timeout_ms)?);
        self.request(|reply| Command::Run { command, waiter, reply })?;
        Ok(wait)
    }

    /// `wait_command`: the end of command `command_id`, or `command_running` once `timeout_ms` passed.
    pub(crate) fn wait_command(&self, command_id: u64, timeout_ms: Option<u32>) -> Result<CommandWait, ServiceError> {
        let (waiter, wait) = command::command_wait(crate::bounds::command_wait(timeout_ms)?);
        self.request(|reply| Command::EndOf { command_id, waiter, reply })?;
        Ok(wait)
    }

    /// What compressing the terminal's memory has done so far.
    #[cfg(test)]
    pub(crate) fn compaction(&self) -> Result<actor::CompactionCounts, ServiceError> {
        self.request(|reply| Command::Compaction { reply })
    }

    /// Kept output from `offset`.
    pub fn replay(&self, offset: u64) -> Result<ReplayRead, ServiceError> {
        self.request(|reply| Command::Replay { offset, reply })
    }

    /// Attaches a subscriber; its first event is `attached`. A controller is refused while another attachment
    /// controls the terminal, unless `existing_controller` says to replace it.
    pub fn subscribe(
        &self,
        offset: u64,
        attachment: String,
        role: Role,
        existing_controller: ExistingController,
    ) -> Result<ProcessSubscription, ServiceError> {
        self.subscribe_with(offset, attachment, role, existing_controller, OptIns::NONE)
    }

    /// [`Self::subscribe`], the subscriber also getting the events (and `attached` members) of the features
    /// `events` names.
    pub fn subscribe_with(
        &self,
        offset: u64,
        attachment: String,
        role: Role,
        existing_controller: ExistingController,
        events: OptIns,
    ) -> Result<ProcessSubscription, ServiceError> {
        crate::bounds::check_attachment(&attachment)?;
        self.request(|reply| Command::Subscribe { offset, attachment, role, existing_controller, events, reply })
    }

    /// Refreshes the foreground process and describes the process. A terminal too busy to answer within
    /// [`INFO_TIMEOUT`] is described as it last published itself.
    pub fn info(&self) -> ProcessInfo {
        self.info_with(OptIns::NONE)
    }

    /// [`Self::info`] with the members of the features `opt_ins` names (looked at afresh too).
    pub fn info_with(&self, opt_ins: OptIns) -> ProcessInfo {
        let deadline = Instant::now() + INFO_TIMEOUT;
        self.info_by(deadline, opt_ins, self.ask_refresh(deadline, opt_ins))
    }

    /// Queues an `Info` command answering by `deadline`; `None` when it could not be queued by then.
    fn ask_refresh(&self, deadline: Instant, opt_ins: OptIns) -> Option<Receiver<Result<ProcessInfo, ServiceError>>> {
        self.send_until(deadline, |reply| Command::Info { opt_ins, reply }).ok()
    }

    /// The answer to [`Self::ask_refresh`] if it comes by `deadline`, else the last published info.
    fn info_by(
        &self,
        deadline: Instant,
        opt_ins: OptIns,
        answer: Option<Receiver<Result<ProcessInfo, ServiceError>>>,
    ) -> ProcessInfo {
        answer.and_then(|answer| self.answer_by(deadline, &answer).ok()).unwrap_or_else(|| self.last_info_with(opt_ins))
    }

    /// Asks the terminal to refresh its foreground process (and what `opt_ins` names) and describe itself,
    /// answering by `deadline`; [`InfoRequest::answer`] waits for it. `list` asks every terminal first, then
    /// waits for them all against one deadline.
    pub(crate) fn ask_info(self: &Arc<Self>, deadline: Instant, opt_ins: OptIns) -> InfoRequest {
        InfoRequest { handle: self.clone(), deadline, opt_ins, answer: self.ask_refresh(deadline, opt_ins) }
    }

    /// The info the actor last published: at once, whatever the actor is doing. Published before the actor
    /// starts, after each command and with each event it publishes, so it already shows whatever a client was
    /// told (output, a title, a size, the exit); only the foreground process may be older.
    pub fn last_info(&self) -> ProcessInfo {
        self.last_info_with(OptIns::NONE)
    }

    /// [`Self::last_info`] with the members of the features `opt_ins` names, as last looked at (they may be
    /// older, like the foreground process).
    pub fn last_info_with(&self, opt_ins: OptIns) -> ProcessInfo {
        let published = self.last_info.lock().unwrap_or_else(|e| e.into_inner()).clone();
        actor::for_opt_ins(published, opt_ins)
    }

    /// Ends the terminal as closing its window would, and more: [`Self::begin_stop`] (the hangup), then after
    /// at most [`HANGUP_GRACE`] (less once the session is empty) SIGKILL to every process left in the child's
    /// session (jobs in groups of their own, `nohup`, disowned or stopped ones alike), then
    /// [`Self::finish_stop`]. Returns false when the terminal had already been terminated.
    pub fn terminate(&self) -> bool {
        if !self.begin_stop() {
            return false;
        }
        self.end_session(std::time::Instant::now() + self.hangup_grace);
        self.finish_stop();
        true
    }

    /// The first step of the stop: ends the threads' work (closing the stop channel and pipe ends the
    /// actor, whose one wait always includes the stop channel, the reader and the writer) and hangs up the
    /// child's session (SIGHUP and SIGCONT to the child, which a shell passes on to its jobs). False when the
    /// terminal was already being stopped. A PTY's child is always treated as ours, as it always was: the daemon
    /// restores SIGCHLD's default at start, so nothing else reaps it.
    pub(crate) fn begin_stop(&self) -> bool {
        let Some(stop) = self.stop.lock().unwrap_or_else(|e| e.into_inner()).take() else { return false };
        // First, so the exit the hangup causes is never published as the terminal's own.
        drop(stop);
        session::hang_up(self.pid);
        true
    }

    /// The second step: once the child has exited or `deadline` passed, SIGKILL to its group and to everything
    /// left in its session. Only after [`Self::begin_stop`].
    pub(crate) fn end_session(&self, deadline: std::time::Instant) {
        match self.session {
            Some(reach) => drop(session::end_sessions(&[reach], deadline)),
            None => Child::new(self.pid).kill(),
        }
    }

    /// The child's session, for ending many terminals' sessions in one look-up (`None`: see the field).
    pub(crate) fn session(&self) -> Option<Reach> {
        self.session
    }

    /// The last step: joins the threads and reaps the child. Only after the child was killed.
    pub(crate) fn finish_stop(&self) {
        let child = Child::new(self.pid);
        // Without a known session, the kill of `end_session` was the group's alone; make sure of the child.
        child.kill();
        child.finish_stop(&self.threads, || false);
    }
}

/// A refresh asked of a terminal by [`PtyHandle::ask_info`], answered by its deadline.
#[derive(Debug)]
pub(crate) struct InfoRequest {
    handle: Arc<PtyHandle>,
    deadline: Instant,
    opt_ins: OptIns,
    /// `None` when the command could not be queued in time (or the terminal has stopped).
    answer: Option<Receiver<Result<ProcessInfo, ServiceError>>>,
}

impl InfoRequest {
    /// The refreshed info when the actor answers by the deadline, else the info it last published (a stopped
    /// terminal, not yet removed, is described as it ended).
    pub(crate) fn answer(self) -> ProcessInfo {
        self.handle.info_by(self.deadline, self.opt_ins, self.answer)
    }
}

#[cfg(test)]
impl PtyHandle {
    /// Queues renames without waiting for their answers until the actor takes no more commands: with a
    /// controller that never reads, its queue and backlog fill with `title_changed` events, then the actor holds
    /// back as many requests as it keeps, then its own command queue fills, for good. Panics when that has not
    /// happened by `deadline`.
    pub(crate) fn fill_commands(&self, deadline: Instant) {
        // About what the actor takes before it takes no more (the `attached` event takes one of the queue's
        // places); its own queue then fills. A full queue alone does not say the actor stopped: it may only be
        // behind the sender (by the queue's 32 places), and then it takes the rest and the queue empties. So a
        // rename more goes in whenever there is room, until the queue has stayed full a while.
        const SETTLED: Duration = Duration::from_millis(500);
        let taken = CONTROLLER_QUEUE_EVENTS + CONTROLLER_BACKLOG_EVENTS + actor::MAX_DEFERRED_COMMANDS;
        let mut n = 0;
        loop {
            assert!(Instant::now() < deadline, "terminal {} still takes commands after {n} renames", self.id);
            if !self.commands.is_full() {
                let title = Some(format!("title {n}"));
                self.send_until(deadline, |reply| Command::Rename { title, reply }).expect("queued");
                n += 1;
                continue;
            }
            let full_since = Instant::now();
            while self.commands.is_full() && full_since.elapsed() < SETTLED {
                std::thread::sleep(Duration::from_millis(5));
            }
            if n >= taken && self.commands.is_full() {
                return;
            }
        }
    }
}

impl Drop for PtyHandle {
    fn drop(&mut self) {
        self.terminate();
    }
}

#[cfg(test)]
mod compaction_tests;
#[cfg(test)]
pub(crate) mod tests;
