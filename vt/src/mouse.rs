//! The mouse reporting a program asked for, as it is in effect: the tracking mode (of `?9`, `?1000`,
//! `?1002`, `?1003`, the last one set wins, and resetting any ends tracking) and the report format (of
//! `?1005`, `?1006`, `?1015`, `?1016`, likewise). The terminal's mode flags only say which were set, not
//! which won, and it has no query for either, so they are found by asking libghostty's own mouse encoder,
//! configured from the terminal, to encode a few probe events: which of them it reports tells the tracking
//! mode, and the shape of a press far to the right tells the format.

use std::ffi::c_void;

use crate::error::{Result, check};
use crate::ffi;
use crate::terminal::Terminal;

/// The tracking mode in effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MouseTracking {
    /// No mouse reports.
    None,
    /// `?9`: presses only.
    X10,
    /// `?1000`: presses and releases.
    Normal,
    /// `?1002`: also motion while a button is held.
    Button,
    /// `?1003`: all motion.
    Any,
}

/// The report format in effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MouseFormat {
    /// The default: `CSI M` and one byte per coordinate.
    X10,
    /// `?1005`: coordinates in UTF-8.
    Utf8,
    /// `?1006`: `CSI <` with decimal cells.
    Sgr,
    /// `?1015`: decimal without `<`.
    Urxvt,
    /// `?1016`: `CSI <` with pixels.
    SgrPixels,
}

impl MouseTracking {
    /// The DEC private mode that selects it.
    pub fn mode(self) -> Option<u16> {
        match self {
            MouseTracking::None => None,
            MouseTracking::X10 => Some(9),
            MouseTracking::Normal => Some(1000),
            MouseTracking::Button => Some(1002),
            MouseTracking::Any => Some(1003),
        }
    }
}

impl MouseFormat {
    /// The DEC private mode that selects it (none for the default).
    pub fn mode(self) -> Option<u16> {
        match self {
            MouseFormat::X10 => None,
            MouseFormat::Utf8 => Some(1005),
            MouseFormat::Sgr => Some(1006),
            MouseFormat::Urxvt => Some(1015),
            MouseFormat::SgrPixels => Some(1016),
        }
    }
}

/// The probe's geometry: cells of 10x10 pixels on a screen wide enough for column 150, where the X10 and
/// UTF-8 formats differ (a coordinate byte past 127).
const CELL_PX: u32 = 10;
const PROBE_COLUMN: f32 = 150.0;

/// A mouse encoder configured from a terminal, and one event to probe it with; both freed on drop.
struct Probe {
    encoder: ffi::GhosttyMouseEncoder,
    event: ffi::GhosttyMouseEvent,
}

impl Probe {
    fn new(terminal: &Terminal) -> Result<Probe> {
        let mut encoder: ffi::GhosttyMouseEncoder = std::ptr::null_mut();
        // Safety: a null allocator selects the default one; `encoder` is a valid out-pointer.
        check(unsafe { ffi::ghostty_mouse_encoder_new(std::ptr::null(), &raw mut encoder) })?;
        let mut event: ffi::GhosttyMouseEvent = std::ptr::null_mut();
        // Safety: as above; on failure the encoder made just before is freed here.
        if let Err(error) = check(unsafe { ffi::ghostty_mouse_event_new(std::ptr::null(), &raw mut event) }) {
            // Safety: made above, freed once.
            unsafe { ffi::ghostty_mouse_encoder_free(encoder) };
            return Err(error);
        }
        let probe = Probe { encoder, event };
        let size = ffi::GhosttyMouseEncoderSize {
            size: std::mem::size_of::<ffi::GhosttyMouseEncoderSize>(),
            screen_width: 400 * CELL_PX,
            screen_height: 100 * CELL_PX,
            cell_width: CELL_PX,
            cell_height: CELL_PX,
            padding_top: 0,
            padding_bottom: 0,
            padding_right: 0,
            padding_left: 0,
        };
        // Safety: both handles are live; `terminal` is; SIZE reads a GhosttyMouseEncoderSize.
        unsafe {
            ffi::ghostty_mouse_encoder_setopt_from_terminal(probe.encoder, terminal.raw);
            ffi::ghostty_mouse_encoder_setopt(
                probe.encoder,
                ffi::GHOSTTY_MOUSE_ENCODER_OPT_SIZE,
                (&raw const size).cast(),
            );
        }
        Ok(probe)
    }

    /// Sets the tracking mode the encoder encodes for, overriding the terminal's.
    fn track(&self, mode: ffi::GhosttyMouseTrackingMode) {
        // Safety: the encoder is live; EVENT reads a GhosttyMouseTrackingMode.
        unsafe {
            ffi::ghostty_mouse_encoder_setopt(
                self.encoder,
                ffi::GHOSTTY_MOUSE_ENCODER_OPT_EVENT,
                (&raw const mode).cast(),
            )
        };
    }

    /// What the encoder writes for `action` at `column` of row 2, with the left button held or not.
    fn encode(&self, action: ffi::GhosttyMouseAction, held: bool, column: f32) -> Result<Vec<u8>> {
        let position = ffi::GhosttyMousePosition { x: column * CELL_PX as f32 + 5.0, y: 2.0 * CELL_PX as f32 + 5.0 };
        let mut out = [0u8; 64];
        let mut len = 0usize;
        // Safety: both handles are live; ANY_BUTTON_PRESSED reads a bool; `out` holds `out.len()` bytes.
        unsafe {
            ffi::ghostty_mouse_encoder_setopt(
                self.encoder,
                ffi::GHOSTTY_MOUSE_ENCODER_OPT_ANY_BUTTON_PRESSED,
                (&raw const held).cast::<c_void>(),
            );
            ffi::ghostty_mouse_event_set_action(self.event, action);
            if held || action != ffi::GHOSTTY_MOUSE_ACTION_MOTION {
                ffi::ghostty_mouse_event_set_button(self.event, ffi::GHOSTTY_MOUSE_BUTTON_LEFT);
            } else {
                ffi::ghostty_mouse_event_clear_button(self.event);
            }
            ffi::ghostty_mouse_event_set_position(self.event, position);
            check(ffi::ghostty_mouse_encoder_encode(
                self.encoder,
                self.event,
                out.as_mut_ptr(),
                out.len(),
                &raw mut len,
            ))?;
        }
        Ok(out[..len.min(out.len())].to_vec())
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        // Safety: both came from their `_new` and are freed once.
        unsafe {
            ffi::ghostty_mouse_event_free(self.event);
            ffi::ghostty_mouse_encoder_free(self.encoder);
        }
    }
}

impl Terminal {
    /// The mouse tracking mode in effect.
    pub fn mouse_tracking(&self) -> Result<MouseTracking> {
        tracking(&Probe::new(self)?)
    }

    /// The mouse report format in effect (whether or not tracking is on).
    pub fn mouse_format(&self) -> Result<MouseFormat> {
        format(&Probe::new(self)?)
    }

    /// Both, with one encoder (the tracking mode is read first: reading the format overrides it).
    pub fn mouse_modes(&self) -> Result<(MouseTracking, MouseFormat)> {
        let probe = Probe::new(self)?;
        Ok((tracking(&probe)?, format(&probe)?))
    }
}

/// The tracking mode the probe's encoder, configured from a terminal, encodes for.
fn tracking(probe: &Probe) -> Result<MouseTracking> {
    let reported = |action, held, column| probe.encode(action, held, column).map(|out| !out.is_empty());
    // Each probe at its own cell, so no motion is dropped as a repeat of the last cell.
    Ok(if !reported(ffi::GHOSTTY_MOUSE_ACTION_PRESS, true, 1.0)? {
        MouseTracking::None
    } else if !reported(ffi::GHOSTTY_MOUSE_ACTION_RELEASE, false, 2.0)? {
        MouseTracking::X10
    } else if !reported(ffi::GHOSTTY_MOUSE_ACTION_MOTION, true, 3.0)? {
        MouseTracking::Normal
    } else if !reported(ffi::GHOSTTY_MOUSE_ACTION_MOTION, false, 4.0)? {
        MouseTracking::Button
    } else {
        MouseTracking::Any
    })
}

/// The report format of the probe's encoder, found from a press it is made to report far to the right.
fn format(probe: &Probe) -> Result<MouseFormat> {
    probe.track(ffi::GHOSTTY_MOUSE_TRACKING_NORMAL);
    let out = probe.encode(ffi::GHOSTTY_MOUSE_ACTION_PRESS, true, PROBE_COLUMN)?;
    Ok(if let Some(rest) = out.strip_prefix(b"\x1b[<") {
        // SGR reports the cell (151), SGR-pixels the pixel (1505).
        let column = rest.split(|&b| b == b';').nth(1).unwrap_or_default();
        if column.len() > 3 { MouseFormat::SgrPixels } else { MouseFormat::Sgr }
    } else if let Some(rest) = out.strip_prefix(b"\x1b[M") {
        // One byte per coordinate in X10; a coordinate past 127 takes two in UTF-8.
        if rest.len() > 3 { MouseFormat::Utf8 } else { MouseFormat::X10 }
    } else if out.starts_with(b"\x1b[") {
        MouseFormat::Urxvt
    } else {
        MouseFormat::X10
    })
}
