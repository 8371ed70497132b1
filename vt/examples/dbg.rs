#[path = "../tests/support/screens.rs"]
#[allow(dead_code)]
mod screens;
fn main() {
    let seed: u64 = std::env::args().nth(1).unwrap().parse().unwrap();
    let case = screens::generate(screens::Class::Modes, seed);
    let mut t = opencode_pty_vt::Terminal::new(case.cols, case.rows, 10_000).unwrap();
    t.write(&case.input);
    let ck = t.vt_checkpoint().unwrap();
    let mut r = opencode_pty_vt::Terminal::new(case.cols, case.rows, 10_000).unwrap();
    r.write(&ck);
    println!("size {}x{} total {}", case.cols, case.rows, t.total_rows());
    for (name, t) in [("src", &t), ("rep", &r)] {
        for y in 0..t.total_rows() {
            let ri = t.row_info(y).unwrap();
            println!(
                "{name} row {y}: cont {} wrap {} {:?}",
                ri.wrap_continuation,
                ri.wrap,
                ri.cells
                    .iter()
                    .map(|c| if c.text.is_empty() { ".".to_string() } else { c.text.clone() })
                    .collect::<String>()
            );
        }
        println!("{name} screen {:?} cursor {:?}", t.active_screen(), t.cursor());
    }
    let esc = |b: &[u8]| String::from_utf8_lossy(b).replace('\x1b', "\\e").replace('\r', "\\r").replace('\n', "\\n");
    println!("INPUT {}", esc(&case.input));
    println!("CKPT {}", esc(&ck));
}
