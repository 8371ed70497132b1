//! Points, grid refs, selections and the formatter: the one path by which terminal contents become bytes.
//!
//! A formatter borrows its terminal and copies the selection's grid refs, which die at the next mutation,
//! so every format here is created, run and freed inside one `&self` call.

use std::ffi::c_void;

use crate::callbacks::{Sink, on_format_write};
use crate::error::{Error, Result, check};
use crate::ffi;
use crate::terminal::Terminal;

/// Which coordinate space a row number is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Space {
    /// The active area: row 0 is the top visible row of the active screen.
    Active,
    /// The whole active screen: row 0 is the oldest history row.
    Screen,
}

/// Output format and extras of one formatter run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Format {
    pub(crate) emit: ffi::GhosttyFormatterFormat,
    pub(crate) unwrap: bool,
    pub(crate) trim: bool,
    pub(crate) extra: ffi::GhosttyFormatterTerminalExtra,
}

impl Format {
    /// Plain text, soft wraps kept as line breaks, trailing whitespace trimmed.
    pub(crate) fn plain() -> Format {
        Format { emit: ffi::GHOSTTY_FORMATTER_FORMAT_PLAIN, unwrap: false, trim: true, extra: no_extras() }
    }

    /// VT sequences of the cells (text and styles) only.
    pub(crate) fn vt_cells(unwrap: bool) -> Format {
        Format { emit: ffi::GHOSTTY_FORMATTER_FORMAT_VT, unwrap, trim: false, extra: no_extras() }
    }
}

/// Extras all off, with every nested `size` set.
pub(crate) fn no_extras() -> ffi::GhosttyFormatterTerminalExtra {
    ffi::GhosttyFormatterTerminalExtra {
        size: size_of::<ffi::GhosttyFormatterTerminalExtra>(),
        screen: ffi::GhosttyFormatterScreenExtra {
            size: size_of::<ffi::GhosttyFormatterScreenExtra>(),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn point(space: Space, x: u16, y: u32) -> ffi::GhosttyPoint {
    let tag = match space {
        Space::Active => ffi::GHOSTTY_POINT_TAG_ACTIVE,
        Space::Screen => ffi::GHOSTTY_POINT_TAG_SCREEN,
    };
    ffi::GhosttyPoint { tag, value: ffi::GhosttyPointValue { coordinate: ffi::GhosttyPointCoordinate { x, y } } }
}

impl Terminal {
    /// A grid ref to cell `(x, y)` of `space`, valid until the next mutation.
    pub(crate) fn grid_ref(&self, space: Space, x: u16, y: usize) -> Result<ffi::GhosttyGridRef> {
        let y = u32::try_from(y).map_err(|_| Error::InvalidValue)?;
        let mut out =
            ffi::GhosttyGridRef { size: size_of::<ffi::GhosttyGridRef>(), node: std::ptr::null_mut(), x: 0, y: 0 };
        // Safety: `raw` is live, the point is passed by value and `out` is a sized out-parameter.
        check(unsafe { ffi::ghostty_terminal_grid_ref(self.raw, point(space, x, y), &raw mut out) })?;
        Ok(out)
    }

    /// A selection of whole rows `first..=last` of `space`.
    pub(crate) fn row_selection(&self, space: Space, first: usize, last: usize) -> Result<ffi::GhosttySelection> {
        let (cols, _) = self.size();
        Ok(ffi::GhosttySelection {
            size: size_of::<ffi::GhosttySelection>(),
            start: self.grid_ref(space, 0, first)?,
            end: self.grid_ref(space, cols.saturating_sub(1), last)?,
            rectangle: false,
        })
    }

    /// Runs one formatter over `selection` (or the whole active screen with history when `None`), refusing
    /// to produce more than `limit` bytes: past it the result is [`Error::BudgetExceeded`], never a prefix.
    pub(crate) fn format(
        &self,
        format: Format,
        selection: Option<&ffi::GhosttySelection>,
        limit: usize,
    ) -> Result<Vec<u8>> {
        let options = ffi::GhosttyFormatterTerminalOptions {
            size: size_of::<ffi::GhosttyFormatterTerminalOptions>(),
            emit: format.emit,
            unwrap: format.unwrap,
            trim: format.trim,
            extra: format.extra,
            selection: selection.map_or(std::ptr::null(), |s| s as *const _),
        };
        let mut formatter: ffi::GhosttyFormatter = std::ptr::null_mut();
        // Safety: `raw` is live and not mutated while the formatter exists (we hold `&self` until it is
        // freed below); options are sized and the selection outlives the formatter.
        check(unsafe { ffi::ghostty_formatter_terminal_new(std::ptr::null(), &raw mut formatter, self.raw, options) })?;
        let mut sink = Sink { out: Vec::new(), limit, overflowed: false };
        let writer = ffi::GhosttyWriter { write: Some(on_format_write), userdata: (&raw mut sink).cast::<c_void>() };
        // Safety: the formatter is live; the writer's userdata is `sink`, which nothing else touches during
        // the call; the formatter is freed exactly once right after.
        let rc = unsafe {
            let rc = ffi::ghostty_formatter_format(formatter, writer);
            ffi::ghostty_formatter_free(formatter);
            rc
        };
        if sink.overflowed {
            return Err(Error::BudgetExceeded { limit });
        }
        check(rc)?;
        Ok(sink.out)
    }

    /// Formats rows `first..=last` of `space`.
    pub(crate) fn format_rows(
        &self,
        format: Format,
        space: Space,
        first: usize,
        last: usize,
        limit: usize,
    ) -> Result<Vec<u8>> {
        let selection = self.row_selection(space, first, last)?;
        self.format(format, Some(&selection), limit)
    }

    /// The formatter's raw VT output of the whole active screen with its history, in one pass. This is not
    /// a checkpoint (it does not round-trip; see [`Terminal::vt_checkpoint`]): it is the cheapest way to
    /// format everything, the baseline the checkpoint's cost is measured against.
    pub fn raw_vt(&self) -> Result<Vec<u8>> {
        self.format(Format::vt_cells(true), None, usize::MAX)
    }

    /// The visible screen as plain text: one line per row, soft wraps not joined, trailing whitespace and
    /// trailing blank rows trimmed.
    pub fn plain_text(&self) -> Result<String> {
        let (_, rows) = self.size();
        let text = self.format_rows(Format::plain(), Space::Active, 0, usize::from(rows) - 1, usize::MAX)?;
        Ok(String::from_utf8_lossy(&text).into_owned())
    }
}
