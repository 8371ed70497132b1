//! The listing budgets: what the daemon's live processes may add to one `list` answer together, so `list` of
//! either mode (one frame) always fits however many processes clients started, and whatever strings they gave.
//!
//! Each process reserves, when it is created, the most its `ProcessInfo` can ever take as JSON apart from pipe
//! metadata (which has its own budget, `pipe/budget.rs`): a fixed [`PROCESS_INFO_OVERHEAD_BYTES`] for the
//! daemon's own members, the exact size of the strings the client gave (command, cwd, group id, output path),
//! and for a PTY two title slots at their maximum (the effective title and the user title, which change later
//! without asking the budget). A `list` names one mode, so each mode has a budget of its own: terminals'
//! reservations stay within [`MAX_PTY_INFO_BYTES`], pipe processes' within [`MAX_PIPE_INFO_BYTES`] (their
//! answer also carries the metadata). A process that would pass its mode's budget is refused before anything
//! starts, and `terminate` gives its reservation back. A paged `list` (SPEC D17) answers a part of the same
//! processes, so it fits too.
//!
//! (Until issue 31 both modes shared 3 MiB, and a terminal's title slots alone take 3 KiB: the 764th idle
//! `sh` was refused. With 7 MiB of their own, about 1700 terminals fit with every title at its longest.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use opencode_pty_protocol::{MAX_SHELL_CWD_BYTES, MAX_TITLE_CHARS};

use crate::bounds::{json_len, max_json_len};
use crate::error::ServiceError;
use crate::pipe::PipeSpec;
use crate::terminal::PtySpec;

/// The most the live pipe processes' infos may take together in `list`, without their metadata (3 MiB). With
/// the metadata total (`MAX_TOTAL_METADATA_BYTES`, 4 MiB) and the answer's own few bytes, a `list` of pipe
/// processes stays under one frame (8 MiB). Since every process reserves at least
/// [`PROCESS_INFO_OVERHEAD_BYTES`], it also bounds how many pipe processes can be live at once (3072).
pub const MAX_PIPE_INFO_BYTES: usize = 3 * 1024 * 1024;

/// The most the live terminals' infos may take together in `list` (7 MiB): with the answer's own few bytes,
/// a `list` of terminals stays under one frame (8 MiB). It bounds the live terminals at 7168, and at about 1700
/// with the shortest command and cwd and both titles at their longest.
pub const MAX_PTY_INFO_BYTES: usize = 7 * 1024 * 1024;

/// What one process's info takes as JSON apart from the strings its client gave: keys, ids, offsets, times,
/// the lifecycle (a failure message is the daemon's own text with the system's reason), a pipe's
/// `output_error` or a PTY's foreground process name (at most 15 bytes from the kernel) and the members of the
/// features a request may opt into (`input`, `alternate_screen`), and the comma that
/// separates it from the next one in `list`. A unit test checks the worst case fits.
pub const PROCESS_INFO_OVERHEAD_BYTES: usize = 1024;

/// One PTY title at its longest as JSON.
pub(crate) const TITLE_SLOT_BYTES: usize = max_json_len(MAX_TITLE_CHARS);

/// What `pty.shell` can take at most as JSON: its keys and state, and a working directory of
/// [`MAX_SHELL_CWD_BYTES`] without control characters (so at most two bytes each as JSON).
pub(crate) const SHELL_SLOT_BYTES: usize = 128 + 2 * MAX_SHELL_CWD_BYTES + 2;

/// What a PTY reserves: the overhead, its command, cwd and group id, two title slots, and with shell integration
/// the shell's slot.
pub(crate) fn pty_cost(spec: &PtySpec, command_bytes: usize) -> usize {
    PROCESS_INFO_OVERHEAD_BYTES
        + command_bytes
        + json_len(&spec.cwd.to_string_lossy())
        + json_len(&spec.group_id)
        + 2 * TITLE_SLOT_BYTES
        + if spec.shell_integration { SHELL_SLOT_BYTES } else { 0 }
}

/// What a pipe process reserves: the overhead, its command, cwd, group id and output path.
pub(crate) fn pipe_cost(spec: &PipeSpec, command_bytes: usize) -> usize {
    PROCESS_INFO_OVERHEAD_BYTES
        + command_bytes
        + json_len(&spec.cwd.to_string_lossy())
        + json_len(&spec.group_id)
        + json_len(&spec.output_path.to_string_lossy())
}

/// The running total of one mode's live reservations, and its limit.
#[derive(Debug)]
pub(crate) struct ListingBudget {
    used: AtomicUsize,
    limit: usize,
}

impl ListingBudget {
    /// A budget of `limit` bytes ([`MAX_PTY_INFO_BYTES`] or [`MAX_PIPE_INFO_BYTES`]; a test daemon's may be
    /// smaller).
    pub(crate) fn new(limit: usize) -> ListingBudget {
        ListingBudget { used: AtomicUsize::new(0), limit }
    }

    /// The bytes reserved now.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Reserves `bytes`, or refuses (reserving nothing) when the total would pass the limit. One atomic step,
    /// so concurrent creates can never pass the budget together.
    pub(crate) fn reserve(self: &Arc<Self>, bytes: usize) -> Result<Reservation, ServiceError> {
        let mut refused = None;
        let result = self.used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
            let total = used.saturating_add(bytes);
            if total > self.limit {
                refused = Some(total);
                return None;
            }
            Some(total)
        });
        match (result, refused) {
            (Err(_), Some(total)) => Err(ServiceError::ListingBudget { total, limit: self.limit }),
            _ => Ok(Reservation { budget: self.clone(), bytes }),
        }
    }
}

impl ListingBudget {
    /// Reserves `bytes` whatever the total: the share of a process handed over by an upgrade, which the
    /// predecessor had admitted (a build with a lower limit must not drop it).
    pub(crate) fn reserve_restored(self: &Arc<Self>, bytes: usize) -> Reservation {
        self.used.fetch_add(bytes, Ordering::AcqRel);
        Reservation { budget: self.clone(), bytes }
    }
}

/// One process's share of the budget, given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    budget: Arc<ListingBudget>,
    bytes: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use opencode_pty_protocol::{
        Lifecycle, MAX_EXACT_INTEGER, MAX_FRAME_BYTES, Mode, PipeInfo, ProcessInfo, PtyInfo, Response,
    };

    use super::*;
    use crate::pipe::MAX_TOTAL_METADATA_BYTES;

    /// An info whose client strings are all empty and everything else at its largest.
    fn worst_fixed_part(mode: Mode) -> ProcessInfo {
        // Longer than any failure the daemon reports: its own words plus the system's reason.
        let failure = "x".repeat(300);
        let big = MAX_EXACT_INTEGER;
        let dimension = std::num::NonZeroU16::new(opencode_pty_protocol::MAX_COLS).unwrap();
        ProcessInfo {
            id: big,
            mode,
            pid: Some(u32::MAX),
            command: vec![],
            cwd: String::new(),
            group_id: String::new(),
            lifecycle: Lifecycle::Failed { message: failure.clone() },
            output_head: big,
            output_tail: big,
            started_at: big,
            exited_at: Some(big),
            pty: (mode == Mode::Pty).then(|| PtyInfo {
                title: String::new(),
                user_title: Some(String::new()),
                // A 15-byte name of invalid UTF-8 read lossily: 15 replacement characters.
                foreground_process: Some("\u{fffd}".repeat(15)),
                cols: dimension,
                rows: dimension,
                shell: None,
                // The members of every feature, at their longest.
                input: Some(Some(opencode_pty_protocol::InputWait::Password)),
                alternate_screen: Some(false),
            }),
            pipe: (mode == Mode::Pipe).then(|| PipeInfo {
                output_path: String::new(),
                output_lines: big,
                output_error: Some(failure),
                metadata: serde_json::Map::new(),
            }),
        }
    }

    #[test]
    fn the_overhead_covers_the_fixed_part_of_an_info() {
        for mode in [Mode::Pty, Mode::Pipe] {
            let bytes = serde_json::to_string(&worst_fixed_part(mode)).unwrap().len();
            assert!(bytes < PROCESS_INFO_OVERHEAD_BYTES, "{mode:?}: {bytes} bytes and a comma");
        }
    }

    #[test]
    fn the_shell_slot_covers_the_largest_shell_state() {
        let cwd = "\\".repeat(MAX_SHELL_CWD_BYTES);
        let state = opencode_pty_protocol::ShellState {
            state: opencode_pty_protocol::ShellStateState::Starting,
            command_id: Some(MAX_EXACT_INTEGER),
            cwd: Some(cwd),
        };
        let bytes = serde_json::to_string(&state).unwrap().len() + r#","shell":"#.len();
        assert!(bytes <= SHELL_SLOT_BYTES, "{bytes} bytes");
    }

    #[test]
    fn a_full_list_of_either_mode_fits_one_frame() {
        // The longest cursor a page can carry, on an answer with no process.
        let page = Response::Processes { processes: vec![], next: Some(MAX_EXACT_INTEGER) };
        let empty = serde_json::to_string(&page).unwrap().len();
        assert!(MAX_PIPE_INFO_BYTES + MAX_TOTAL_METADATA_BYTES + empty <= MAX_FRAME_BYTES);
        assert!(MAX_PTY_INFO_BYTES + empty <= MAX_FRAME_BYTES);
    }

    #[test]
    fn a_thousand_idle_shells_fit_with_every_title_at_its_longest() {
        // `sh` in a working directory of 200 characters, as OpenCode starts them (issue 31).
        let spec = PtySpec {
            program: "sh".into(),
            args: vec![],
            cwd: format!("/{}", "d".repeat(199)).into(),
            group_id: "session-0123456789".into(),
            ..crate::terminal::tests::sh("")
        };
        let command_bytes = crate::terminal::validate(&spec).expect("valid");
        let cost = pty_cost(&spec, command_bytes);
        assert!(1000 * cost <= MAX_PTY_INFO_BYTES, "{cost} bytes each");
        assert!(1000 * cost > MAX_PIPE_INFO_BYTES, "the shared 3 MiB of before could not hold them");
    }

    #[test]
    fn reservations_are_bounded_and_given_back() {
        let budget = Arc::new(ListingBudget::new(MAX_PIPE_INFO_BYTES));
        let first = budget.reserve(MAX_PIPE_INFO_BYTES - 10).unwrap();
        let error = budget.reserve(11).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "the daemon's live processes would take {} bytes of a list answer, over the {}-byte total",
                MAX_PIPE_INFO_BYTES + 1,
                MAX_PIPE_INFO_BYTES
            )
        );
        let second = budget.reserve(10).unwrap();
        assert_eq!(budget.used(), MAX_PIPE_INFO_BYTES);
        drop((first, second));
        assert_eq!(budget.used(), 0);
    }
}
