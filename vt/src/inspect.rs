//! Cell-level reads: row wrap flags, cell text, width and style. The checkpoint uses the flags; tests and
//! the fidelity tool compare whole rows of two terminals with [`Terminal::row_info`].

use crate::error::{Result, check};
use crate::ffi;
use crate::format::Space;
use crate::terminal::Terminal;

/// The code points one cell's grapheme is first read with; a longer cluster is read again at its size.
const MAX_GRAPHEME_CODEPOINTS: usize = 32;

#[cfg(test)]
thread_local! {
    /// Rows read through [`Terminal::row_info`] on this thread: how the tests see what the checkpoint reads.
    pub(crate) static ROWS_READ: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A cell or underline color.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Color {
    /// The terminal default.
    #[default]
    Default,
    /// One of the 256 palette entries.
    Palette(u8),
    /// A direct RGB color.
    Rgb(u8, u8, u8),
}

/// The style of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Style {
    /// Foreground.
    pub fg: Color,
    /// Background.
    pub bg: Color,
    /// Underline color.
    pub underline_color: Color,
    /// SGR 1.
    pub bold: bool,
    /// SGR 3.
    pub italic: bool,
    /// SGR 2.
    pub faint: bool,
    /// SGR 5.
    pub blink: bool,
    /// SGR 7.
    pub inverse: bool,
    /// SGR 8.
    pub invisible: bool,
    /// SGR 9.
    pub strikethrough: bool,
    /// SGR 53.
    pub overline: bool,
    /// Underline kind (0 none, 1 single, 2 double, 3 curly, 4 dotted, 5 dashed).
    pub underline: i32,
}

impl Style {
    /// The part of this style that shows on a blank cell (the foreground only under inverse video).
    pub(crate) fn on_blank(&self) -> Style {
        Style {
            fg: if self.inverse { self.fg } else { Color::Default },
            bg: self.bg,
            underline_color: if self.underline != 0 { self.underline_color } else { Color::Default },
            inverse: self.inverse,
            strikethrough: self.strikethrough,
            overline: self.overline,
            underline: self.underline,
            ..Style::default()
        }
    }
}

/// One cell: its text (empty for an empty cell), its width class and its style. A cell that holds only a
/// background color (what erasing with a colored pen leaves) reads as an empty cell with that background.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CellInfo {
    /// The grapheme written in the cell; empty when nothing is.
    pub text: String,
    /// `ffi::GHOSTTY_CELL_WIDE_*`: narrow, wide, spacer tail or spacer head.
    pub wide: i32,
    /// The cell's style.
    pub style: Style,
    /// The URI of the hyperlink (OSC 8) the cell belongs to, if any.
    pub link: Option<String>,
}

/// One physical row: its cells and whether it soft-wraps into the next row.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct RowInfo {
    /// Every cell, left to right.
    pub cells: Vec<CellInfo>,
    /// The row continues on the next row (soft wrap).
    pub wrap: bool,
    /// The row continues the previous row.
    pub wrap_continuation: bool,
}

/// The wrap flags of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct RowFlags {
    pub(crate) wrap: bool,
    pub(crate) continuation: bool,
    /// The first or last cell holds only a background color (set by [`Terminal::row_scan`] only).
    pub(crate) bg_edge: bool,
}

fn color(c: &ffi::GhosttyStyleColor) -> Color {
    // Safety: the tag says which union field libghostty wrote.
    unsafe {
        match c.tag {
            ffi::GHOSTTY_STYLE_COLOR_PALETTE => Color::Palette(c.value.palette),
            ffi::GHOSTTY_STYLE_COLOR_RGB => Color::Rgb(c.value.rgb.r, c.value.rgb.g, c.value.rgb.b),
            _ => Color::Default,
        }
    }
}

impl Terminal {
    /// The wrap flags of row `y` of the whole active screen (row 0 is the oldest history row).
    pub(crate) fn row_flags(&self, y: usize) -> Result<RowFlags> {
        flags_at(&self.grid_ref(Space::Screen, 0, y)?)
    }

    /// [`Terminal::row_flags`] plus whether the row's first or last cell holds only a background color, as
    /// erasing with a colored pen leaves it: one grid lookup for all of it.
    pub(crate) fn row_scan(&self, y: usize) -> Result<RowFlags> {
        let (cols, _) = self.size();
        let row_ref = self.grid_ref(Space::Screen, 0, y)?;
        let mut flags = flags_at(&row_ref)?;
        for x in [0, cols - 1] {
            let cell_ref = column_ref(&row_ref, x);
            let mut cell: ffi::GhosttyCell = 0;
            let mut content: ffi::GhosttyCellContentTag = ffi::GHOSTTY_CELL_CONTENT_CODEPOINT;
            // Safety: a column ref of a fresh row ref (see `column_ref`); CONTENT_TAG is a C int.
            unsafe {
                check(ffi::ghostty_grid_ref_cell(&cell_ref, &raw mut cell))?;
                check(ffi::ghostty_cell_get(cell, ffi::GHOSTTY_CELL_DATA_CONTENT_TAG, (&raw mut content).cast()))?;
            }
            flags.bg_edge |=
                matches!(content, ffi::GHOSTTY_CELL_CONTENT_BG_COLOR_PALETTE | ffi::GHOSTTY_CELL_CONTENT_BG_COLOR_RGB);
        }
        Ok(flags)
    }

    /// Whether any cell of row `y` (whole active screen) holds text.
    pub(crate) fn row_has_text(&self, y: usize) -> Result<bool> {
        let (cols, _) = self.size();
        let row_ref = self.grid_ref(Space::Screen, 0, y)?;
        for x in 0..cols {
            if cell_shows(&row_ref, x)?.0 {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether row `y` (whole active screen) has a gap: a cell without text (never written, or erased, with or
    /// without a background color) before a cell that shows something (text or a background color).
    pub(crate) fn row_has_gap(&self, y: usize) -> Result<bool> {
        let (cols, _) = self.size();
        let row_ref = self.grid_ref(Space::Screen, 0, y)?;
        let mut textless_seen = false;
        for x in 0..cols {
            let (text, background) = cell_shows(&row_ref, x)?;
            if textless_seen && (text || background) {
                return Ok(true);
            }
            textless_seen |= !text;
        }
        Ok(false)
    }

    /// Everything about row `y` of the whole active screen (row 0 is the oldest history row). Costs a few
    /// library calls per cell: meant for the checkpoint's exact part, tests and tools, not for history.
    pub fn row_info(&self, y: usize) -> Result<RowInfo> {
        self.row_cells(y, true)
    }

    /// [`Terminal::row_info`], with every style left at the default unless `styles` (reading styles is a
    /// good part of the cost when every cell has its own, and the checkpoint's plain form drops them).
    pub(crate) fn row_cells(&self, y: usize, styles: bool) -> Result<RowInfo> {
        #[cfg(test)]
        ROWS_READ.with(|n| n.set(n.get() + 1));
        let (cols, _) = self.size();
        let row_ref = self.grid_ref(Space::Screen, 0, y)?;
        let flags = flags_at(&row_ref)?;
        let mut cells = Vec::with_capacity(usize::from(cols));
        // Cells of one row share few styles: remember the last one read.
        let mut last_style: Option<(ffi::GhosttyStyleId, Style)> = None;
        for x in 0..cols {
            let cell_ref = column_ref(&row_ref, x);
            cells.push(cell_info(&cell_ref, styles, &mut last_style)?);
        }
        Ok(RowInfo { cells, wrap: flags.wrap, wrap_continuation: flags.continuation })
    }
}

/// The ref to column `x` of the row `row_ref` (a ref to column 0) points into: the same page node and row,
/// another `x`. libghostty does not bounds-check a ref's `x`, so this is sound only because `x` is below the
/// terminal's width, every page is as wide as the terminal, a row never spans pages, and nothing mutates the
/// terminal while the ref is used (callers hold `&Terminal`).
fn column_ref(row_ref: &ffi::GhosttyGridRef, x: u16) -> ffi::GhosttyGridRef {
    debug_assert_eq!(row_ref.x, 0, "column refs are made from a column-0 ref");
    ffi::GhosttyGridRef { x, ..*row_ref }
}

/// The wrap flags of the row a fresh grid ref points into.
fn flags_at(grid_ref: &ffi::GhosttyGridRef) -> Result<RowFlags> {
    let mut row: ffi::GhosttyRow = 0;
    let mut flags = RowFlags::default();
    // Safety: the grid ref is fresh (no mutation since), the row handle is a plain value, and WRAP and
    // WRAP_CONTINUATION are C bools.
    unsafe {
        check(ffi::ghostty_grid_ref_row(grid_ref, &raw mut row))?;
        check(ffi::ghostty_row_get(row, ffi::GHOSTTY_ROW_DATA_WRAP, (&raw mut flags.wrap).cast()))?;
        check(ffi::ghostty_row_get(
            row,
            ffi::GHOSTTY_ROW_DATA_WRAP_CONTINUATION,
            (&raw mut flags.continuation).cast(),
        ))?;
    }
    Ok(flags)
}

/// Whether column `x` of the row `row_ref` points at holds text (a wide character's second half and the
/// placeholder of one that wrapped do not), and whether it holds only a background color.
fn cell_shows(row_ref: &ffi::GhosttyGridRef, x: u16) -> Result<(bool, bool)> {
    let grid_ref = column_ref(row_ref, x);
    let mut cell: ffi::GhosttyCell = 0;
    let mut has_text = false;
    let mut content: ffi::GhosttyCellContentTag = ffi::GHOSTTY_CELL_CONTENT_CODEPOINT;
    let keys = [ffi::GHOSTTY_CELL_DATA_HAS_TEXT, ffi::GHOSTTY_CELL_DATA_CONTENT_TAG];
    let mut values: [*mut std::ffi::c_void; 2] = [(&raw mut has_text).cast(), (&raw mut content).cast()];
    let mut written = 0usize;
    // Safety: a column ref of a fresh row ref (see `column_ref`); each value points at the type its key writes
    // (a C bool for HAS_TEXT, a C int for CONTENT_TAG), and both arrays hold `keys.len()` entries.
    unsafe {
        check(ffi::ghostty_grid_ref_cell(&grid_ref, &raw mut cell))?;
        check(ffi::ghostty_cell_get_multi(cell, keys.len(), keys.as_ptr(), values.as_mut_ptr(), &raw mut written))?;
    }
    let background =
        matches!(content, ffi::GHOSTTY_CELL_CONTENT_BG_COLOR_PALETTE | ffi::GHOSTTY_CELL_CONTENT_BG_COLOR_RGB);
    Ok((has_text, background))
}

/// Reads one cell through a fresh grid ref (no mutation since it was made).
fn cell_info(
    grid_ref: &ffi::GhosttyGridRef,
    styles: bool,
    last_style: &mut Option<(ffi::GhosttyStyleId, Style)>,
) -> Result<CellInfo> {
    let mut cell: ffi::GhosttyCell = 0;
    let mut content: ffi::GhosttyCellContentTag = ffi::GHOSTTY_CELL_CONTENT_CODEPOINT;
    let mut wide: ffi::GhosttyCellWide = ffi::GHOSTTY_CELL_WIDE_NARROW;
    let mut style_id: ffi::GhosttyStyleId = 0;
    let mut codepoint = 0u32;
    let mut linked = false;
    let keys = [
        ffi::GHOSTTY_CELL_DATA_CONTENT_TAG,
        ffi::GHOSTTY_CELL_DATA_WIDE,
        ffi::GHOSTTY_CELL_DATA_STYLE_ID,
        ffi::GHOSTTY_CELL_DATA_CODEPOINT,
        ffi::GHOSTTY_CELL_DATA_HAS_HYPERLINK,
    ];
    let mut values: [*mut std::ffi::c_void; 5] = [
        (&raw mut content).cast(),
        (&raw mut wide).cast(),
        (&raw mut style_id).cast(),
        (&raw mut codepoint).cast(),
        (&raw mut linked).cast(),
    ];
    let mut written = 0usize;
    // Safety: the grid ref is fresh; each value points at the type its key writes (C ints for CONTENT_TAG
    // and WIDE, a u16 for STYLE_ID, a u32 for CODEPOINT, a C bool for HAS_HYPERLINK), and both arrays hold
    // `keys.len()` entries.
    unsafe {
        check(ffi::ghostty_grid_ref_cell(grid_ref, &raw mut cell))?;
        check(ffi::ghostty_cell_get_multi(cell, keys.len(), keys.as_ptr(), values.as_mut_ptr(), &raw mut written))?;
    }
    let mut text = String::new();
    let mut bg_only = None;
    match content {
        ffi::GHOSTTY_CELL_CONTENT_CODEPOINT => text.extend(char::from_u32(codepoint).filter(|&c| c != '\0')),
        ffi::GHOSTTY_CELL_CONTENT_CODEPOINT_GRAPHEME => text = graphemes(grid_ref)?,
        ffi::GHOSTTY_CELL_CONTENT_BG_COLOR_PALETTE => {
            let mut palette = 0u8;
            // Safety: COLOR_PALETTE is a u8 palette index.
            unsafe {
                check(ffi::ghostty_cell_get(cell, ffi::GHOSTTY_CELL_DATA_COLOR_PALETTE, (&raw mut palette).cast()))?
            };
            bg_only = Some(Color::Palette(palette));
        }
        ffi::GHOSTTY_CELL_CONTENT_BG_COLOR_RGB => {
            let mut rgb = ffi::GhosttyColorRgb { r: 0, g: 0, b: 0 };
            // Safety: COLOR_RGB is a GhosttyColorRgb.
            unsafe { check(ffi::ghostty_cell_get(cell, ffi::GHOSTTY_CELL_DATA_COLOR_RGB, (&raw mut rgb).cast()))? };
            bg_only = Some(Color::Rgb(rgb.r, rgb.g, rgb.b));
        }
        _ => {}
    }
    let mut style = match *last_style {
        _ if style_id == 0 || !styles => Style::default(),
        Some((id, style)) if id == style_id => style,
        _ => {
            let style = read_style(grid_ref)?;
            *last_style = Some((style_id, style));
            style
        }
    };
    if let Some(bg) = bg_only {
        style.bg = bg;
    }
    let link = if linked { hyperlink(grid_ref)? } else { None };
    Ok(CellInfo { text, wide, style, link })
}

/// The longest hyperlink URI read from a cell (8 KiB); a cell with a longer one reads as unlinked, so a
/// checkpoint, which repeats the URI for every run of linked cells, stays bounded.
pub const MAX_LINK_BYTES: usize = 8192;

/// The URI of the hyperlink of the cell a fresh grid ref points at, without control characters (which could
/// end the OSC 8 it is written back in).
fn hyperlink(grid_ref: &ffi::GhosttyGridRef) -> Result<Option<String>> {
    let mut buf = vec![0u8; MAX_LINK_BYTES];
    let mut len = 0usize;
    // Safety: the grid ref is fresh; `buf` holds `buf.len()` bytes and `len` is a valid out-pointer.
    match check(unsafe { ffi::ghostty_grid_ref_hyperlink_uri(grid_ref, buf.as_mut_ptr(), buf.len(), &raw mut len) }) {
        Ok(()) => {}
        Err(crate::error::Error::NoValue | crate::error::Error::OutOfSpace) => return Ok(None),
        Err(other) => return Err(other),
    }
    buf.truncate(len.min(MAX_LINK_BYTES));
    buf.retain(|&b| b >= 0x20 && b != 0x7f);
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

/// The grapheme cluster of the cell a fresh grid ref points at, however long.
fn graphemes(grid_ref: &ffi::GhosttyGridRef) -> Result<String> {
    let mut codepoints = vec![0u32; MAX_GRAPHEME_CODEPOINTS];
    loop {
        let mut len = 0usize;
        // Safety: the buffer holds `codepoints.len()` values; `len` receives how many were written, or how many
        // are needed when the buffer is too small.
        let rc = unsafe {
            ffi::ghostty_grid_ref_graphemes(grid_ref, codepoints.as_mut_ptr(), codepoints.len(), &raw mut len)
        };
        if rc == ffi::GHOSTTY_OUT_OF_SPACE && len > codepoints.len() {
            codepoints.resize(len, 0);
            continue;
        }
        check(rc)?;
        return Ok(codepoints[..len.min(codepoints.len())].iter().filter_map(|&c| char::from_u32(c)).collect());
    }
}

/// Reads the full style of the cell a fresh grid ref points at.
fn read_style(grid_ref: &ffi::GhosttyGridRef) -> Result<Style> {
    // Safety: all zeroes is a valid GhosttyStyle (null tags, false flags); `size` is set before the call.
    let mut style: ffi::GhosttyStyle = unsafe { std::mem::zeroed() };
    style.size = size_of::<ffi::GhosttyStyle>();
    // Safety: the grid ref is fresh and the out-parameter is sized.
    unsafe { check(ffi::ghostty_grid_ref_style(grid_ref, &raw mut style))? };
    Ok(Style {
        fg: color(&style.fg_color),
        bg: color(&style.bg_color),
        underline_color: color(&style.underline_color),
        bold: style.bold,
        italic: style.italic,
        faint: style.faint,
        blink: style.blink,
        inverse: style.inverse,
        invisible: style.invisible,
        strikethrough: style.strikethrough,
        overline: style.overline,
        underline: style.underline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row walk reuses one grid ref per row; a lookup per cell must read the same.
    #[test]
    fn row_walk_reads_what_per_cell_lookups_read() {
        let mut t = Terminal::new(12, 4, 100).expect("terminal");
        t.write(
            "\x1b[1;31mab\x1b[0m 漢e\u{301}\x1b[44m\x1b[K\r\n\x1b[4:3mwide界🙂 0123456789\x1b[0m\r\n\x1b[7mx"
                .as_bytes(),
        );
        for y in 0..t.total_rows() {
            let row = t.row_info(y).expect("row");
            for (x, cell) in row.cells.iter().enumerate() {
                let lookup = t.grid_ref(Space::Screen, x as u16, y).expect("ref");
                assert_eq!(*cell, cell_info(&lookup, true, &mut None).expect("cell"), "row {y} cell {x}");
            }
        }
        let row = t.row_info(0).expect("row");
        assert_eq!(row.cells[0].text, "a");
        assert_eq!(row.cells[0].style.fg, Color::Palette(1));
        assert!(row.cells[0].style.bold);
        assert_eq!(row.cells[3].wide, ffi::GHOSTTY_CELL_WIDE_WIDE);
        assert_eq!(row.cells[5].text, "e\u{301}");
        assert_eq!(row.cells[11].style.bg, Color::Palette(4));
        assert!(row.cells[11].text.is_empty());
    }
}
