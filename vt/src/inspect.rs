//! Cell-level reads: row wrap flags, cell text, width and style. The checkpoint uses the flags; tests and
//! the fidelity tool compare whole rows of two terminals with [`Terminal::row_info`].

use std::ffi::c_void;

use crate::error::{Result, check};
use crate::ffi;
use crate::format::Space;
use crate::terminal::Terminal;

/// The most code points one cell's grapheme is read with; longer clusters are an error.
const MAX_GRAPHEME_CODEPOINTS: usize = 32;

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
        let grid_ref = self.grid_ref(Space::Screen, 0, y)?;
        let mut row: ffi::GhosttyRow = 0;
        let mut flags = RowFlags::default();
        // Safety: the grid ref is fresh (no mutation since), the row handle is a plain value, and WRAP and
        // WRAP_CONTINUATION are C bools.
        unsafe {
            check(ffi::ghostty_grid_ref_row(&grid_ref, &raw mut row))?;
            check(ffi::ghostty_row_get(row, ffi::GHOSTTY_ROW_DATA_WRAP, (&raw mut flags.wrap).cast()))?;
            check(ffi::ghostty_row_get(
                row,
                ffi::GHOSTTY_ROW_DATA_WRAP_CONTINUATION,
                (&raw mut flags.continuation).cast(),
            ))?;
        }
        Ok(flags)
    }

    /// Whether any cell of row `y` (whole active screen) holds text.
    pub(crate) fn row_has_text(&self, y: usize) -> Result<bool> {
        let (cols, _) = self.size();
        for x in 0..cols {
            let grid_ref = self.grid_ref(Space::Screen, x, y)?;
            let mut cell: ffi::GhosttyCell = 0;
            let mut has_text = false;
            // Safety: fresh grid ref; HAS_TEXT is a C bool.
            unsafe {
                check(ffi::ghostty_grid_ref_cell(&grid_ref, &raw mut cell))?;
                check(ffi::ghostty_cell_get(cell, ffi::GHOSTTY_CELL_DATA_HAS_TEXT, (&raw mut has_text).cast()))?;
            }
            if has_text {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Everything about row `y` of the whole active screen (row 0 is the oldest history row). Costs one
    /// grid lookup per cell: meant for tests and tools, not for hot paths.
    pub fn row_info(&self, y: usize) -> Result<RowInfo> {
        let (cols, _) = self.size();
        let flags = self.row_flags(y)?;
        let mut cells = Vec::with_capacity(usize::from(cols));
        for x in 0..cols {
            cells.push(self.cell_info(x, y)?);
        }
        Ok(RowInfo { cells, wrap: flags.wrap, wrap_continuation: flags.continuation })
    }

    fn cell_info(&self, x: u16, y: usize) -> Result<CellInfo> {
        let grid_ref = self.grid_ref(Space::Screen, x, y)?;
        let mut cell: ffi::GhosttyCell = 0;
        let mut wide: ffi::GhosttyCellWide = ffi::GHOSTTY_CELL_WIDE_NARROW;
        let mut codepoints = [0u32; MAX_GRAPHEME_CODEPOINTS];
        let mut len = 0usize;
        // Safety: all zeroes is a valid GhosttyStyle (null tags, false flags); `size` is set below.
        let mut style: ffi::GhosttyStyle = unsafe { std::mem::zeroed() };
        style.size = size_of::<ffi::GhosttyStyle>();
        // Safety: fresh grid ref; WIDE is a C int; the grapheme buffer holds `MAX_GRAPHEME_CODEPOINTS`
        // values; the style out-parameter is sized.
        unsafe {
            check(ffi::ghostty_grid_ref_cell(&grid_ref, &raw mut cell))?;
            check(ffi::ghostty_cell_get(cell, ffi::GHOSTTY_CELL_DATA_WIDE, (&raw mut wide).cast::<c_void>()))?;
            check(ffi::ghostty_grid_ref_graphemes(&grid_ref, codepoints.as_mut_ptr(), codepoints.len(), &raw mut len))?;
            check(ffi::ghostty_grid_ref_style(&grid_ref, &raw mut style))?;
        }
        let mut content: ffi::GhosttyCellContentTag = ffi::GHOSTTY_CELL_CONTENT_CODEPOINT;
        let mut palette = 0u8;
        let mut rgb = ffi::GhosttyColorRgb { r: 0, g: 0, b: 0 };
        // Safety: CONTENT_TAG is a C int, COLOR_PALETTE a u8 palette index, COLOR_RGB a GhosttyColorRgb.
        unsafe {
            check(ffi::ghostty_cell_get(cell, ffi::GHOSTTY_CELL_DATA_CONTENT_TAG, (&raw mut content).cast()))?;
            if content == ffi::GHOSTTY_CELL_CONTENT_BG_COLOR_PALETTE {
                check(ffi::ghostty_cell_get(cell, ffi::GHOSTTY_CELL_DATA_COLOR_PALETTE, (&raw mut palette).cast()))?;
            } else if content == ffi::GHOSTTY_CELL_CONTENT_BG_COLOR_RGB {
                check(ffi::ghostty_cell_get(cell, ffi::GHOSTTY_CELL_DATA_COLOR_RGB, (&raw mut rgb).cast()))?;
            }
        }
        let text = codepoints[..len.min(MAX_GRAPHEME_CODEPOINTS)].iter().filter_map(|&c| char::from_u32(c)).collect();
        let bg = match content {
            ffi::GHOSTTY_CELL_CONTENT_BG_COLOR_PALETTE => Color::Palette(palette),
            ffi::GHOSTTY_CELL_CONTENT_BG_COLOR_RGB => Color::Rgb(rgb.r, rgb.g, rgb.b),
            _ => color(&style.bg_color),
        };
        Ok(CellInfo {
            text,
            wide,
            style: Style {
                fg: color(&style.fg_color),
                bg,
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
            },
        })
    }
}
