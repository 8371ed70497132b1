//! `opencode-pty-codegen`: will emit the Rust and TypeScript protocol types from `schema/` (issue 3).

fn main() {
    eprintln!("opencode-pty-codegen: the schema and its generators arrive with the schema issue");
    std::process::exit(2);
}
