//! Escapes for the playground: `send` turns `\r`, `\n`, `\t`, `\e`, `\\` and `\xHH` into bytes, and raw
//! output is shown with control bytes spelled out.

use anyhow::bail;

/// The bytes `text` stands for.
pub(super) fn parse_escapes(text: &str) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buffer = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            continue;
        }
        match chars.next() {
            Some('r') => out.push(b'\r'),
            Some('n') => out.push(b'\n'),
            Some('t') => out.push(b'\t'),
            Some('e') => out.push(0x1b),
            Some('\\') => out.push(b'\\'),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                match u8::from_str_radix(&hex, 16) {
                    Ok(byte) if hex.len() == 2 => out.push(byte),
                    _ => bail!("\\x needs two hex digits, got {hex:?}"),
                }
            }
            Some(other) => bail!("unknown escape \\{other}"),
            None => bail!("a lone \\ at the end"),
        }
    }
    Ok(out)
}

/// `bytes` as text, with control bytes and invalid UTF-8 escaped.
pub(super) fn show_bytes(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x1b' => out.push_str("\\e"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_become_bytes() {
        assert_eq!(parse_escapes("a\\r\\n\\t\\e\\\\\\x41é").unwrap(), b"a\r\n\t\x1b\\A\xc3\xa9");
        assert!(parse_escapes("\\q").is_err());
        assert!(parse_escapes("\\x4").is_err());
        assert!(parse_escapes("\\").is_err());
    }

    #[test]
    fn control_bytes_are_shown() {
        assert_eq!(show_bytes(b"a\x1b[1m\r\nb\x07"), "a\\e[1m\\r\\n\nb\\x07");
    }
}
