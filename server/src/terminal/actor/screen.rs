//! The actor's reads and changes of the screen and its description: resize (PTY and emulator in one step,
//! with its `resized` checkpoint), `snapshot`, `read_rows`, the foreground process (and, in the same look, what
//! the terminal waits for), and `info`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use opencode_pty_protocol::{Lifecycle, MAX_FRAME_BYTES, MAX_ROWS_BYTES, Mode, ProcessInfo, PtyInfo, Response};
use opencode_pty_vt::{MAX_CHECKPOINT_BYTES, Screen};

use super::{Actor, nonzero};
use crate::error::ServiceError;
use crate::process::OptIns;
use crate::process::ending::Ending;
use crate::process::sys;
use crate::procinfo::{self, ForegroundGroup};
use crate::terminal::spawn::PtySpec;
use crate::terminal::title::Titles;

impl Actor {
    /// Resizes the PTY and the emulator in one step and publishes `resized` with a fresh checkpoint.
    pub(super) fn resize(&mut self, cols: u16, rows: u16) -> Result<(), ServiceError> {
        // The handle checked the size already; this keeps an unchecked one from reaching the PTY or emulator.
        crate::bounds::check_size(cols, rows)?;
        sys::set_window_size(self.parts.master.fd(), cols, rows)
            .map_err(|e| ServiceError::system("resizing the PTY failed", e))?;
        // A snapshot prepared for an upgrade is of the old size, which the output since does not tell.
        self.prepared = None;
        self.emulator().resize(cols, rows)?;
        (self.cols, self.rows) = (cols, rows);
        // An in-band size report (mode 2048) is one of these replies: it reaches the child before later input.
        let replies = self.vt.take_replies();
        self.queue_replies(replies);
        // The size has changed by now; say so when its checkpoint cannot be made (SPEC C4, D8).
        let checkpoint =
            self.vt.vt_checkpoint().map_err(|source| ServiceError::ResizedWithoutEvent { cols, rows, source })?;
        self.emit(Response::Resized {
            cols: nonzero(cols),
            rows: nonzero(rows),
            generation: self.generation,
            checkpoint_base64: BASE64.encode(checkpoint),
        });
        Ok(())
    }

    /// A `snapshot`: the screen's text, a checkpoint that fits the rest of the frame, and the cursor.
    pub(super) fn snapshot(&mut self, opt_ins: OptIns) -> Result<Response, ServiceError> {
        self.refresh(opt_ins);
        let text = self.emulator().plain_text()?;
        let cursor = self.vt.cursor();
        let mut response = Response::Snapshot {
            process: self.info_for(opt_ins),
            text,
            checkpoint_base64: String::new(),
            cursor_x: cursor.x,
            cursor_y: cursor.y,
        };
        // The checkpoint gets what the frame has left after the rest of the answer (B6), in base64's 4 bytes
        // per 3, up to its own limit (C4).
        let rest = serde_json::to_vec(&response).map_or(MAX_FRAME_BYTES, |json| json.len());
        let budget = (MAX_FRAME_BYTES.saturating_sub(rest) / 4 * 3).min(MAX_CHECKPOINT_BYTES);
        let checkpoint = self.vt.vt_checkpoint_within(budget)?;
        if let Response::Snapshot { checkpoint_base64, .. } = &mut response {
            *checkpoint_base64 = BASE64.encode(checkpoint);
        }
        Ok(response)
    }

    /// A `rows` answer: the last `rows` rows (the screen's height by default) within `MAX_ROWS_BYTES`.
    pub(super) fn read_rows(&mut self, rows: Option<u16>, opt_ins: OptIns) -> Result<Response, ServiceError> {
        let count = match rows {
            Some(0) => return Err(ServiceError::invalid("row count must be positive")),
            Some(rows) => usize::from(rows),
            None => usize::from(self.rows),
        };
        let lines = self.emulator().read_rows(count, MAX_ROWS_BYTES)?;
        let cursor = self.vt.cursor();
        if opt_ins.input {
            self.look_at_input();
        }
        Ok(Response::Rows { process: self.info_for(opt_ins), lines, cursor_x: cursor.x, cursor_y: cursor.y })
    }

    /// Re-reads the foreground process and publishes a change; in the same look, what the terminal waits for,
    /// when `opt_ins` asks for it or a subscriber listens for its changes.
    pub(super) fn refresh(&mut self, opt_ins: OptIns) {
        let parts = &self.parts;
        let group = procinfo::foreground_group(parts.master.fd(), parts.tty.as_deref(), parts.pid);
        let current = group.as_ref().and_then(ForegroundGroup::name);
        if current != self.foreground {
            self.foreground = current.clone();
            self.emit(Response::ForegroundProcessChanged { process: current });
        }
        if opt_ins.input || self.input_watched() {
            self.input_seen_in(group.as_ref());
        }
    }

    /// The process as a request that opted into `opt_ins` sees it (`list`, `get`, `snapshot`, `rows`,
    /// `attached`).
    pub(super) fn info_for(&self, opt_ins: OptIns) -> ProcessInfo {
        super::for_opt_ins(self.info_full(), opt_ins)
    }

    /// The process with the members of every feature: what the actor publishes (see
    /// `PtyHandle::last_info_with`, which leaves out what a request did not ask for).
    pub(super) fn info_full(&self) -> ProcessInfo {
        let lifecycle = match (&self.failure, &self.life) {
            (Some(message), _) => Lifecycle::Failed { message: message.clone() },
            (None, Ending::Ended { child: exit, .. }) => {
                Lifecycle::Exited { exit_code: exit.exit_code, signal: exit.signal.clone() }
            }
            (None, Ending::Running { .. }) => Lifecycle::Running,
        };
        let parts = &self.parts;
        ProcessInfo {
            lifecycle,
            output_head: self.replay.head(),
            output_tail: self.replay.tail(),
            exited_at: self.life.published().map(|exited| exited.at),
            pty: Some(PtyInfo {
                title: self.titles.effective().to_owned(),
                user_title: self.titles.user().map(str::to_owned),
                foreground_process: self.foreground.clone(),
                cols: nonzero(self.cols),
                rows: nonzero(self.rows),
                shell: self.shell.as_ref().map(|shell| shell.state()),
                input: Some(self.input_value()),
                alternate_screen: Some(match &self.rebuilding {
                    Some(pending) => pending.alternate_screen,
                    None => self.vt.active_screen() == Screen::Alternate,
                }),
            }),
            ..initial_info(parts.id, parts.pid, parts.started_at, &parts.spec)
        }
    }
}

/// The info of a terminal whose actor has seen nothing yet: running, no output, its creation title and size,
/// no foreground process known. Published before the actor starts, so that registering the terminal never
/// waits for its actor.
pub(crate) fn initial_info(id: u64, pid: u32, started_at: u64, spec: &PtySpec) -> ProcessInfo {
    ProcessInfo {
        id,
        mode: Mode::Pty,
        pid: Some(pid),
        command: std::iter::once(spec.program.clone()).chain(spec.args.iter().cloned()).collect(),
        cwd: spec.cwd.display().to_string(),
        group_id: spec.group_id.clone(),
        lifecycle: Lifecycle::Running,
        output_head: 0,
        output_tail: 0,
        started_at,
        exited_at: None,
        pty: Some(PtyInfo {
            title: Titles::new(spec.title.clone()).effective().to_owned(),
            user_title: None,
            foreground_process: None,
            cols: nonzero(spec.cols),
            rows: nonzero(spec.rows),
            shell: spec.shell_integration.then(crate::terminal::shell::starting),
            input: None,
            alternate_screen: None,
        }),
        pipe: None,
    }
}
