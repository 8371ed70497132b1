fn main() {
    for input in [
        &b"\x1b[1;10r\x1b[11;22H  \x1b[r"[..],
        b"\x1b[1;10r\x1b[11;22H  \x1b[D\x1b[X\x1b[r",
        b"\x1b[1;10r\x1b[11;22H  \x1b[D\x1b[P\x1b[r",
        b"\x1b[1;10r\x1b[11;22H  \x1b[D\x1b[1K\x1b[r",
    ] {
        let mut t = opencode_pty_vt::Terminal::new(22, 11, 10_000).unwrap();
        t.write(input);
        for y in 8..t.total_rows() {
            let ri = t.row_info(y).unwrap();
            println!(
                "row {y}: cont {} wrap {} {:?}",
                ri.wrap_continuation,
                ri.wrap,
                ri.cells
                    .iter()
                    .map(|c| if c.text.is_empty() { ".".to_string() } else { c.text.clone() })
                    .collect::<String>()
            );
        }
        println!("cursor {:?}", t.cursor());
    }
}
