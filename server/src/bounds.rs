//! Checks of client-supplied sizes against the protocol's limits (`opencode_pty_protocol::limits`): terminal
//! sizes, the length of every string the daemon reports back (titles, group ids, attachment ids, paths,
//! arguments) and the size of a command. Each refusal names the field and the limit.
//!
//! Lengths are counted in characters (Unicode scalar values), as JSON Schema's `maxLength` counts them, so a
//! request the schema accepts is never refused here for a string's length; only the cross-field bounds
//! (`MAX_CELLS`, `MAX_COMMAND_BYTES`) are the daemon's alone.

use opencode_pty_protocol::{
    DEFAULT_COMMAND_WAIT_MS, MAX_ARG_CHARS, MAX_ARGS, MAX_ATTACHMENT_ID_CHARS, MAX_CELLS, MAX_COLS, MAX_COMMAND_BYTES,
    MAX_COMMAND_WAIT_MS, MAX_COMMANDS, MAX_GROUP_ID_CHARS, MAX_OPT_IN_ITEMS, MAX_PATH_CHARS, MAX_REPLAY_BYTES,
    MAX_ROWS, MAX_RUN_COMMAND_BYTES, MAX_SCROLLBACK_LINES, MAX_TITLE_CHARS, MIN_REPLAY_BYTES, OptIn,
};

use crate::error::ServiceError;

/// `commands`'s `limit` (1 to [`MAX_COMMANDS`]; the schema says so, the decoding does not), as a count.
pub(crate) fn check_commands_limit(limit: Option<u16>) -> Result<Option<usize>, ServiceError> {
    match limit.map(usize::from) {
        Some(limit) if limit == 0 || limit > MAX_COMMANDS => Err(ServiceError::invalid(format!(
            "limit must be between 1 and {MAX_COMMANDS} (MAX_COMMANDS), got {limit}"
        ))),
        limit => Ok(limit),
    }
}

/// Refuses a command `run` cannot type: empty (or blank), over [`MAX_RUN_COMMAND_BYTES`], or holding a control
/// character other than a newline or a tab (an escape would end a bracketed paste early, a Ctrl-C interrupt it).
pub(crate) fn check_run_command(command: &str) -> Result<(), ServiceError> {
    if command.len() > MAX_RUN_COMMAND_BYTES {
        return Err(ServiceError::invalid(format!(
            "command is {} bytes, over the {MAX_RUN_COMMAND_BYTES}-byte limit (MAX_RUN_COMMAND_BYTES)",
            command.len()
        )));
    }
    if command.trim().is_empty() {
        return Err(ServiceError::invalid("command is empty: run types a command and waits for its end"));
    }
    if let Some(control) = command.chars().find(|&c| c.is_control() && c != '\n' && c != '\t') {
        return Err(ServiceError::invalid(format!(
            "command holds the control character U+{:04X}: run types text (use input for keys)",
            u32::from(control)
        )));
    }
    Ok(())
}

/// How long a `run` or `wait_command` waits: its `timeout_ms` ([`DEFAULT_COMMAND_WAIT_MS`] when absent), refused
/// over [`MAX_COMMAND_WAIT_MS`].
pub(crate) fn command_wait(timeout_ms: Option<u32>) -> Result<std::time::Duration, ServiceError> {
    let ms = timeout_ms.unwrap_or(DEFAULT_COMMAND_WAIT_MS);
    if ms > MAX_COMMAND_WAIT_MS {
        return Err(ServiceError::invalid(format!(
            "timeout_ms must be at most {MAX_COMMAND_WAIT_MS} (24 hours, MAX_COMMAND_WAIT_MS), got {ms}"
        )));
    }
    Ok(std::time::Duration::from_millis(u64::from(ms)))
}

/// Refuses a terminal size with a zero, more than [`MAX_COLS`] columns, more than [`MAX_ROWS`] rows or more
/// than [`MAX_CELLS`] cells.
pub(crate) fn check_size(cols: u16, rows: u16) -> Result<(), ServiceError> {
    if cols == 0 || rows == 0 {
        return Err(ServiceError::invalid(format!("terminal dimensions must be positive (got {cols}x{rows})")));
    }
    if cols > MAX_COLS {
        return Err(ServiceError::invalid(format!("terminal width {cols} is over the {MAX_COLS}-column limit")));
    }
    if rows > MAX_ROWS {
        return Err(ServiceError::invalid(format!("terminal height {rows} is over the {MAX_ROWS}-row limit")));
    }
    let cells = u32::from(cols) * u32::from(rows);
    if cells > MAX_CELLS {
        return Err(ServiceError::invalid(format!(
            "terminal size {cols}x{rows} is {cells} cells, over the {MAX_CELLS}-cell limit"
        )));
    }
    Ok(())
}

/// Refuses `value` when it has more than `limit` characters; `field` names it in the message.
pub(crate) fn check_chars(field: &str, value: &str, limit: usize) -> Result<(), ServiceError> {
    // A string of at most `limit` bytes has at most `limit` characters: only longer ones need counting.
    if value.len() > limit && value.chars().count() > limit {
        return Err(ServiceError::invalid(format!("{field} is over the {limit}-character limit")));
    }
    Ok(())
}

/// A title (`create_pty`, `rename`): at most [`MAX_TITLE_CHARS`].
pub(crate) fn check_title(title: &str) -> Result<(), ServiceError> {
    check_chars("title", title, MAX_TITLE_CHARS)
}

/// An attachment id: at most [`MAX_ATTACHMENT_ID_CHARS`].
pub(crate) fn check_attachment(attachment: &str) -> Result<(), ServiceError> {
    check_chars("attachment_id", attachment, MAX_ATTACHMENT_ID_CHARS)
}

/// A request's `features` or `subscribe`'s `events` (`field`): at most [`MAX_OPT_IN_ITEMS`] entries.
pub(crate) fn check_opt_ins(field: &str, items: &[OptIn]) -> Result<(), ServiceError> {
    if items.len() > MAX_OPT_IN_ITEMS {
        let count = items.len();
        return Err(ServiceError::invalid(format!(
            "{field} has {count} items, over the {MAX_OPT_IN_ITEMS}-item limit"
        )));
    }
    Ok(())
}

/// What every process echoes back: `program`, `args` (at most [`MAX_ARGS`], each at most [`MAX_ARG_CHARS`],
/// and together with the program at most [`MAX_COMMAND_BYTES`] as JSON), `cwd` and `group_id`. Answers the
/// size of `command` as JSON.
pub(crate) fn check_process(program: &str, args: &[String], cwd: &str, group_id: &str) -> Result<usize, ServiceError> {
    check_chars("program", program, MAX_PATH_CHARS)?;
    check_chars("cwd", cwd, MAX_PATH_CHARS)?;
    check_chars("group_id", group_id, MAX_GROUP_ID_CHARS)?;
    if args.len() > MAX_ARGS {
        return Err(ServiceError::invalid(format!("args has {} items, over the {MAX_ARGS}-item limit", args.len())));
    }
    for (index, arg) in args.iter().enumerate() {
        check_chars(&format!("argument {index}"), arg, MAX_ARG_CHARS)?;
    }
    // The JSON array `command`: brackets, one comma between items, each item as a JSON string.
    let bytes = 2 + args.len() + json_len(program) + args.iter().map(|a| json_len(a)).sum::<usize>();
    if bytes > MAX_COMMAND_BYTES {
        return Err(ServiceError::invalid(format!(
            "the command (program and args) takes {bytes} bytes as JSON, over the {MAX_COMMAND_BYTES}-byte limit"
        )));
    }
    Ok(bytes)
}

/// What the operating system can pass to a child: variable names that are not empty and hold neither `=` nor
/// NUL (a name with `=` would become another variable: `A=B` set to `c` reads as `A` set to `B=c`), values
/// and the program, arguments and cwd without NUL.
pub(crate) fn check_exec_strings<'a>(
    program: &str,
    args: &[String],
    cwd: &str,
    env: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> Result<(), ServiceError> {
    let nul = |what: &str, value: &str| {
        if value.contains('\0') {
            return Err(ServiceError::invalid(format!("{what} must not contain NUL")));
        }
        Ok(())
    };
    nul("program", program)?;
    nul("cwd", cwd)?;
    for (index, arg) in args.iter().enumerate() {
        nul(&format!("argument {index}"), arg)?;
    }
    for (name, value) in env {
        if name.is_empty() || name.contains(['=', '\0']) {
            let name = shown(name);
            return Err(ServiceError::invalid(format!("env name {name:?} must be non-empty, without '=' or NUL")));
        }
        nul(&format!("the value of env {:?}", shown(name)), value)?;
    }
    Ok(())
}

/// A client's text as an error repeats it: at most 64 characters.
fn shown(text: &str) -> String {
    match text.char_indices().nth(64) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}...", &text[..end]),
    }
}

/// The size of `value` as a JSON string, quotes included, as `serde_json` writes it.
pub(crate) fn json_len(value: &str) -> usize {
    2 + value
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum::<usize>()
}

/// The most bytes a string of `chars` characters can take as JSON (every character a `\u00XX` escape).
pub(crate) const fn max_json_len(chars: usize) -> usize {
    2 + 6 * chars
}

/// A terminal's own history and replay bounds (`create_pty`'s `scrollback_lines` and `replay_bytes`): within
/// [`MAX_SCROLLBACK_LINES`] and [`MIN_REPLAY_BYTES`]..=[`MAX_REPLAY_BYTES`].
pub(crate) fn check_memory_bounds(
    scrollback_lines: Option<u32>,
    replay_bytes: Option<u32>,
) -> Result<(), ServiceError> {
    if let Some(lines) = scrollback_lines.filter(|lines| *lines > MAX_SCROLLBACK_LINES) {
        return Err(ServiceError::invalid(format!(
            "scrollback_lines must be at most {MAX_SCROLLBACK_LINES} (got {lines})"
        )));
    }
    if let Some(bytes) = replay_bytes.filter(|bytes| !(MIN_REPLAY_BYTES..=MAX_REPLAY_BYTES).contains(bytes)) {
        return Err(ServiceError::invalid(format!(
            "replay_bytes must be from {MIN_REPLAY_BYTES} to {MAX_REPLAY_BYTES} (got {bytes})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_len_matches_serde_json() {
        for s in ["", "plain", "é→😀", "quote\" back\\slash", "\n\r\t\u{8}\u{c}", "\u{1}\u{1f}\u{7f}\u{9b}"] {
            assert_eq!(json_len(s), serde_json::to_string(s).unwrap().len(), "{s:?}");
        }
        let worst: String = std::iter::repeat_n('\u{1}', 10).collect();
        assert_eq!(json_len(&worst), max_json_len(10));
    }

    #[test]
    fn sizes_up_to_each_limit_pass_and_one_more_is_refused() {
        check_size(MAX_COLS, (MAX_CELLS / u32::from(MAX_COLS)) as u16).unwrap();
        check_size((MAX_CELLS / u32::from(MAX_ROWS)) as u16, MAX_ROWS).unwrap();
        check_size(1, 1).unwrap();
        let error = |cols, rows| check_size(cols, rows).unwrap_err().to_string();
        assert_eq!(error(MAX_COLS + 1, 1), "terminal width 1001 is over the 1000-column limit");
        assert_eq!(error(1, MAX_ROWS + 1), "terminal height 1001 is over the 1000-row limit");
        assert_eq!(error(1000, 501), "terminal size 1000x501 is 501000 cells, over the 500000-cell limit");
        assert_eq!(error(0, 5), "terminal dimensions must be positive (got 0x5)");
    }

    #[test]
    fn lengths_are_counted_in_characters() {
        let wide: String = std::iter::repeat_n('😀', MAX_TITLE_CHARS).collect();
        check_title(&wide).expect("256 characters of 4 bytes each");
        let error = check_title(&format!("{wide}x")).unwrap_err().to_string();
        assert_eq!(error, "title is over the 256-character limit");
    }

    #[test]
    fn the_command_is_bounded_as_json() {
        let arg = "a".repeat(MAX_ARG_CHARS);
        check_process("sh", std::slice::from_ref(&arg), "/", "g").expect("one maximal argument");
        let error = check_process("sh", &[arg.clone(), arg], "/", "g").unwrap_err().to_string();
        assert!(error.contains("over the 262144-byte limit"), "{error}");
        let many = vec![String::new(); MAX_ARGS + 1];
        assert!(check_process("sh", &many, "/", "g").unwrap_err().to_string().contains("4096-item limit"));
        let bytes = check_process("sh", &["-c".into(), "x\"y".into()], "/", "g").unwrap();
        assert_eq!(bytes, serde_json::to_string(&["sh", "-c", "x\"y"]).unwrap().len());
    }
}
