//! The `#[repr(C)]` types we pass to libghostty-vt have the sizes, alignments and field offsets of the C
//! declarations: checked against the numbers written down for Ghostty revision 6467b1dab, and against the
//! layout the loaded library reports about itself (`ghostty_type_json`).

use std::ffi::CStr;
use std::mem::{align_of, offset_of, size_of};

use opencode_pty_vt::ffi::*;
use serde_json::Value;

/// `(C name, size, align, [(field, offset)])`.
type Layout = (&'static str, usize, usize, Vec<(&'static str, usize)>);

/// The layout of every struct that crosses the boundary.
fn ours() -> Vec<Layout> {
    vec![
        (
            "GhosttyString",
            size_of::<GhosttyString>(),
            align_of::<GhosttyString>(),
            vec![("ptr", offset_of!(GhosttyString, ptr)), ("len", offset_of!(GhosttyString, len))],
        ),
        (
            "GhosttyWriter",
            size_of::<GhosttyWriter>(),
            align_of::<GhosttyWriter>(),
            vec![("write", offset_of!(GhosttyWriter, write)), ("userdata", offset_of!(GhosttyWriter, userdata))],
        ),
        (
            "GhosttyGridRef",
            size_of::<GhosttyGridRef>(),
            align_of::<GhosttyGridRef>(),
            vec![
                ("size", offset_of!(GhosttyGridRef, size)),
                ("node", offset_of!(GhosttyGridRef, node)),
                ("x", offset_of!(GhosttyGridRef, x)),
                ("y", offset_of!(GhosttyGridRef, y)),
            ],
        ),
        (
            "GhosttyPointCoordinate",
            size_of::<GhosttyPointCoordinate>(),
            align_of::<GhosttyPointCoordinate>(),
            vec![("x", offset_of!(GhosttyPointCoordinate, x)), ("y", offset_of!(GhosttyPointCoordinate, y))],
        ),
        (
            "GhosttyPoint",
            size_of::<GhosttyPoint>(),
            align_of::<GhosttyPoint>(),
            vec![("tag", offset_of!(GhosttyPoint, tag)), ("value", offset_of!(GhosttyPoint, value))],
        ),
        (
            "GhosttySelection",
            size_of::<GhosttySelection>(),
            align_of::<GhosttySelection>(),
            vec![
                ("size", offset_of!(GhosttySelection, size)),
                ("start", offset_of!(GhosttySelection, start)),
                ("end", offset_of!(GhosttySelection, end)),
                ("rectangle", offset_of!(GhosttySelection, rectangle)),
            ],
        ),
        (
            "GhosttyTerminalSelectionFormatOptions",
            size_of::<GhosttyTerminalSelectionFormatOptions>(),
            align_of::<GhosttyTerminalSelectionFormatOptions>(),
            vec![
                ("size", offset_of!(GhosttyTerminalSelectionFormatOptions, size)),
                ("emit", offset_of!(GhosttyTerminalSelectionFormatOptions, emit)),
                ("unwrap", offset_of!(GhosttyTerminalSelectionFormatOptions, unwrap)),
                ("trim", offset_of!(GhosttyTerminalSelectionFormatOptions, trim)),
                ("selection", offset_of!(GhosttyTerminalSelectionFormatOptions, selection)),
            ],
        ),
        (
            "GhosttyFormatterScreenExtra",
            size_of::<GhosttyFormatterScreenExtra>(),
            align_of::<GhosttyFormatterScreenExtra>(),
            vec![
                ("size", offset_of!(GhosttyFormatterScreenExtra, size)),
                ("cursor", offset_of!(GhosttyFormatterScreenExtra, cursor)),
                ("charsets", offset_of!(GhosttyFormatterScreenExtra, charsets)),
            ],
        ),
        (
            "GhosttyFormatterTerminalExtra",
            size_of::<GhosttyFormatterTerminalExtra>(),
            align_of::<GhosttyFormatterTerminalExtra>(),
            vec![
                ("size", offset_of!(GhosttyFormatterTerminalExtra, size)),
                ("palette", offset_of!(GhosttyFormatterTerminalExtra, palette)),
                ("keyboard", offset_of!(GhosttyFormatterTerminalExtra, keyboard)),
                ("screen", offset_of!(GhosttyFormatterTerminalExtra, screen)),
            ],
        ),
        (
            "GhosttyFormatterTerminalOptions",
            size_of::<GhosttyFormatterTerminalOptions>(),
            align_of::<GhosttyFormatterTerminalOptions>(),
            vec![
                ("size", offset_of!(GhosttyFormatterTerminalOptions, size)),
                ("emit", offset_of!(GhosttyFormatterTerminalOptions, emit)),
                ("unwrap", offset_of!(GhosttyFormatterTerminalOptions, unwrap)),
                ("trim", offset_of!(GhosttyFormatterTerminalOptions, trim)),
                ("extra", offset_of!(GhosttyFormatterTerminalOptions, extra)),
                ("selection", offset_of!(GhosttyFormatterTerminalOptions, selection)),
            ],
        ),
        (
            "GhosttyTerminalModeConfig",
            size_of::<GhosttyTerminalModeConfig>(),
            align_of::<GhosttyTerminalModeConfig>(),
            vec![
                ("mode", offset_of!(GhosttyTerminalModeConfig, mode)),
                ("value", offset_of!(GhosttyTerminalModeConfig, value)),
            ],
        ),
        (
            "GhosttyColorRgb",
            size_of::<GhosttyColorRgb>(),
            align_of::<GhosttyColorRgb>(),
            vec![("r", offset_of!(GhosttyColorRgb, r)), ("b", offset_of!(GhosttyColorRgb, b))],
        ),
        (
            "GhosttyStyleColor",
            size_of::<GhosttyStyleColor>(),
            align_of::<GhosttyStyleColor>(),
            vec![("tag", offset_of!(GhosttyStyleColor, tag)), ("value", offset_of!(GhosttyStyleColor, value))],
        ),
        (
            "GhosttyStyle",
            size_of::<GhosttyStyle>(),
            align_of::<GhosttyStyle>(),
            vec![
                ("size", offset_of!(GhosttyStyle, size)),
                ("fg_color", offset_of!(GhosttyStyle, fg_color)),
                ("bg_color", offset_of!(GhosttyStyle, bg_color)),
                ("underline_color", offset_of!(GhosttyStyle, underline_color)),
                ("bold", offset_of!(GhosttyStyle, bold)),
                ("overline", offset_of!(GhosttyStyle, overline)),
                ("underline", offset_of!(GhosttyStyle, underline)),
            ],
        ),
    ]
}

/// The x86-64 numbers recorded for revision 6467b1dab: `(name, size, align)`.
const RECORDED: [(&str, usize, usize); 11] = [
    ("GhosttyString", 16, 8),
    ("GhosttyWriter", 16, 8),
    ("GhosttyGridRef", 24, 8),
    ("GhosttyPointCoordinate", 8, 4),
    ("GhosttyPoint", 24, 8),
    ("GhosttySelection", 64, 8),
    ("GhosttyTerminalSelectionFormatOptions", 24, 8),
    ("GhosttyFormatterScreenExtra", 16, 8),
    ("GhosttyFormatterTerminalExtra", 32, 8),
    ("GhosttyFormatterTerminalOptions", 56, 8),
    ("GhosttyTerminalModeConfig", 4, 2),
];

#[test]
fn sizes_and_alignments_match_the_recorded_numbers() {
    let ours = ours();
    for (name, size, align) in RECORDED {
        let (_, our_size, our_align, _) = ours.iter().find(|(n, ..)| *n == name).expect(name);
        assert_eq!((*our_size, *our_align), (size, align), "{name}");
    }
    assert_eq!(offset_of!(GhosttyFormatterTerminalOptions, extra), 16);
    assert_eq!(offset_of!(GhosttyFormatterTerminalOptions, selection), 48);
    assert_eq!(offset_of!(GhosttySelection, rectangle), 56);
    assert_eq!(offset_of!(GhosttyPointCoordinate, y), 4);
}

#[test]
fn layouts_match_what_the_library_reports() {
    // Safety: ghostty_type_json returns a NUL-terminated static string.
    let json = unsafe { CStr::from_ptr(ghostty_type_json()) }.to_str().expect("utf-8");
    let doc: Value = serde_json::from_str(json).expect("json");
    assert_eq!(doc["abi"]["pointer_size"], 8);
    for (name, size, align, fields) in ours() {
        let ty = &doc["types"][name];
        assert_eq!(ty["size"].as_u64(), Some(size as u64), "{name} size");
        assert_eq!(ty["align"].as_u64(), Some(align as u64), "{name} align");
        for (field, offset) in fields {
            assert_eq!(ty["fields"][field]["offset"].as_u64(), Some(offset as u64), "{name}.{field}");
        }
    }
}

#[test]
fn library_reports_its_version() {
    assert!(!opencode_pty_vt::library_version().is_empty());
    assert_eq!(GHOSTTY_REVISION, "6467b1dab");
}

#[test]
fn enum_constants_match_what_the_library_reports() {
    // Safety: ghostty_type_json returns a NUL-terminated static string.
    let json = unsafe { CStr::from_ptr(ghostty_type_json()) }.to_str().expect("utf-8");
    let doc: Value = serde_json::from_str(json).expect("json");
    let checks: [(&str, &str, i32); 40] = [
        ("GhosttyResult", "SUCCESS", GHOSTTY_SUCCESS),
        ("GhosttyResult", "OUT_OF_MEMORY", GHOSTTY_OUT_OF_MEMORY),
        ("GhosttyResult", "INVALID_VALUE", GHOSTTY_INVALID_VALUE),
        ("GhosttyResult", "OUT_OF_SPACE", GHOSTTY_OUT_OF_SPACE),
        ("GhosttyResult", "NO_VALUE", GHOSTTY_NO_VALUE),
        ("GhosttyResult", "IO_ERROR", GHOSTTY_IO_ERROR),
        ("GhosttyResult", "LIMIT_EXCEEDED", GHOSTTY_LIMIT_EXCEEDED),
        ("GhosttyResult", "REJECTED", GHOSTTY_REJECTED),
        ("GhosttyFormatterFormat", "PLAIN", GHOSTTY_FORMATTER_FORMAT_PLAIN),
        ("GhosttyFormatterFormat", "VT", GHOSTTY_FORMATTER_FORMAT_VT),
        ("GhosttyTerminalOption", "USERDATA", GHOSTTY_TERMINAL_OPT_USERDATA),
        ("GhosttyTerminalOption", "WRITE_PTY", GHOSTTY_TERMINAL_OPT_WRITE_PTY),
        ("GhosttyTerminalOption", "TITLE_CHANGED", GHOSTTY_TERMINAL_OPT_TITLE_CHANGED),
        ("GhosttyTerminalOption", "SCROLLBACK_MAX_BYTES", GHOSTTY_TERMINAL_OPT_SCROLLBACK_MAX_BYTES),
        ("GhosttyTerminalOption", "SCROLLBACK_MAX_LINES", GHOSTTY_TERMINAL_OPT_SCROLLBACK_MAX_LINES),
        ("GhosttyTerminalData", "COLS", GHOSTTY_TERMINAL_DATA_COLS),
        ("GhosttyTerminalData", "CURSOR_PENDING_WRAP", GHOSTTY_TERMINAL_DATA_CURSOR_PENDING_WRAP),
        ("GhosttyTerminalData", "ACTIVE_SCREEN", GHOSTTY_TERMINAL_DATA_ACTIVE_SCREEN),
        ("GhosttyTerminalData", "TITLE", GHOSTTY_TERMINAL_DATA_TITLE),
        ("GhosttyTerminalData", "TOTAL_ROWS", GHOSTTY_TERMINAL_DATA_TOTAL_ROWS),
        ("GhosttyTerminalData", "MODE", GHOSTTY_TERMINAL_DATA_MODE),
        ("GhosttyTerminalCompressionMode", "INCREMENTAL", GHOSTTY_TERMINAL_COMPRESSION_MODE_INCREMENTAL),
        ("GhosttyTerminalCompressionMode", "FULL", GHOSTTY_TERMINAL_COMPRESSION_MODE_FULL),
        ("GhosttyTerminalCompressionResult", "UNSUPPORTED", GHOSTTY_TERMINAL_COMPRESSION_RESULT_UNSUPPORTED),
        ("GhosttyTerminalCompressionResult", "PENDING", GHOSTTY_TERMINAL_COMPRESSION_RESULT_PENDING),
        ("GhosttyTerminalCompressionResult", "COMPLETE", GHOSTTY_TERMINAL_COMPRESSION_RESULT_COMPLETE),
        ("GhosttyPointTag", "ACTIVE", GHOSTTY_POINT_TAG_ACTIVE),
        ("GhosttyPointTag", "SCREEN", GHOSTTY_POINT_TAG_SCREEN),
        ("GhosttyRowData", "WRAP", GHOSTTY_ROW_DATA_WRAP),
        ("GhosttyRowData", "WRAP_CONTINUATION", GHOSTTY_ROW_DATA_WRAP_CONTINUATION),
        ("GhosttyCellData", "CONTENT_TAG", GHOSTTY_CELL_DATA_CONTENT_TAG),
        ("GhosttyCellData", "WIDE", GHOSTTY_CELL_DATA_WIDE),
        ("GhosttyCellData", "COLOR_RGB", GHOSTTY_CELL_DATA_COLOR_RGB),
        ("GhosttyCellWide", "SPACER_HEAD", GHOSTTY_CELL_WIDE_SPACER_HEAD),
        ("GhosttyCellContentTag", "BG_COLOR_RGB", GHOSTTY_CELL_CONTENT_BG_COLOR_RGB),
        ("GhosttyRenderStateData", "CURSOR_VISUAL_STYLE", GHOSTTY_RENDER_STATE_DATA_CURSOR_VISUAL_STYLE),
        ("GhosttyRenderStateData", "CURSOR_BLINKING", GHOSTTY_RENDER_STATE_DATA_CURSOR_BLINKING),
        ("GhosttyRenderStateCursorVisualStyle", "BAR", GHOSTTY_RENDER_STATE_CURSOR_VISUAL_STYLE_BAR),
        ("GhosttyRenderStateCursorVisualStyle", "BLOCK", GHOSTTY_RENDER_STATE_CURSOR_VISUAL_STYLE_BLOCK),
        ("GhosttyRenderStateCursorVisualStyle", "UNDERLINE", GHOSTTY_RENDER_STATE_CURSOR_VISUAL_STYLE_UNDERLINE),
    ];
    for (ty, name, value) in checks {
        assert_eq!(doc["types"][ty]["values"][name].as_i64(), Some(i64::from(value)), "{ty}::{name}");
    }
}
