//! `opencode-pty-conformance`: will replay recorded frame transcripts against any daemon binary and report the
//! first frame that differs. It depends on `opencode-pty-protocol` only.

fn main() {
    eprintln!("opencode-pty-conformance: transcripts arrive with the daemon issue");
    std::process::exit(2);
}
