//! The colours a program changed with OSC 4 (palette entries) and OSC 10, 11 and 12 (foreground, background,
//! cursor): read against the terminal's defaults, so a checkpoint sets again exactly the ones that differ.

use std::io::Write;

use crate::error::{Error, Result};
use crate::ffi;
use crate::terminal::Terminal;

/// A colour as three bytes.
pub type Rgb = [u8; 3];

/// The colours that OSC 10, 11 and 12 set: `(data, its default, OSC number)`.
const DYNAMIC: [(ffi::GhosttyTerminalData, ffi::GhosttyTerminalData, u8); 3] = [
    (ffi::GHOSTTY_TERMINAL_DATA_COLOR_FOREGROUND, ffi::GHOSTTY_TERMINAL_DATA_COLOR_FOREGROUND_DEFAULT, 10),
    (ffi::GHOSTTY_TERMINAL_DATA_COLOR_BACKGROUND, ffi::GHOSTTY_TERMINAL_DATA_COLOR_BACKGROUND_DEFAULT, 11),
    (ffi::GHOSTTY_TERMINAL_DATA_COLOR_CURSOR, ffi::GHOSTTY_TERMINAL_DATA_COLOR_CURSOR_DEFAULT, 12),
];

impl Terminal {
    /// The 256-colour palette as it is now (`current`) or before any OSC 4.
    fn palette_of(&self, data: ffi::GhosttyTerminalData) -> Result<[Rgb; 256]> {
        let mut palette = [ffi::GhosttyColorRgb { r: 0, g: 0, b: 0 }; 256];
        // Safety: COLOR_PALETTE and COLOR_PALETTE_DEFAULT write a GhosttyColorRgb[256].
        unsafe { self.get(data, &mut palette)? };
        Ok(palette.map(|c| [c.r, c.g, c.b]))
    }

    /// The palette as programs have set it.
    pub fn palette(&self) -> Result<[Rgb; 256]> {
        self.palette_of(ffi::GHOSTTY_TERMINAL_DATA_COLOR_PALETTE)
    }

    /// One dynamic colour, `None` when it has no value.
    fn color(&self, data: ffi::GhosttyTerminalData) -> Result<Option<Rgb>> {
        let mut color = ffi::GhosttyColorRgb { r: 0, g: 0, b: 0 };
        // Safety: the COLOR_* data other than the palettes write one GhosttyColorRgb.
        match unsafe { self.get(data, &mut color) } {
            Ok(()) => Ok(Some([color.r, color.g, color.b])),
            Err(Error::NoValue) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// The foreground, background and cursor colours as programs have set them (OSC 10, 11, 12), each
    /// `None` when it is the default.
    pub fn dynamic_colors(&self) -> Result<[Option<Rgb>; 3]> {
        let mut out = [None; 3];
        for (slot, (data, default, _)) in out.iter_mut().zip(DYNAMIC) {
            let now = self.color(data)?;
            *slot = if now == self.color(default)? { None } else { now };
        }
        Ok(out)
    }

    /// OSC 4 for every palette entry that differs from the default, and OSC 10, 11, 12 for the colours set.
    pub(crate) fn push_colors(&self, out: &mut Vec<u8>) -> Result<()> {
        let (now, default) = (self.palette()?, self.palette_of(ffi::GHOSTTY_TERMINAL_DATA_COLOR_PALETTE_DEFAULT)?);
        for (index, (color, base)) in now.iter().zip(&default).enumerate() {
            if color != base {
                let _ = write!(out, "\x1b]4;{index};rgb:{:02x}/{:02x}/{:02x}\x1b\\", color[0], color[1], color[2]);
            }
        }
        for (color, (_, _, osc)) in self.dynamic_colors()?.iter().zip(DYNAMIC) {
            if let Some([r, g, b]) = color {
                let _ = write!(out, "\x1b]{osc};rgb:{r:02x}/{g:02x}/{b:02x}\x1b\\");
            }
        }
        Ok(())
    }
}
