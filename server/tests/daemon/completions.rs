//! What the binary generates from its own command line: `completions bash|zsh|fish` (each loaded into its real
//! shell, where present, and asked to complete) and `man` (roff that groff renders without a warning, naming
//! every command, and a page of its own for each).

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use support::{WAIT, binary, run_bounded};

/// The commands people run: each must be completed and named by the man page.
const COMMANDS: [&str; 11] =
    ["daemon", "play", "status", "list", "attach", "run", "watch", "stop", "completions", "man", "version"];

/// What the daemon runs itself, or only tests pass: never offered.
const HIDDEN: [&str; 4] = ["upgrade-check", "resume", "--handoff-ttl-ms", "--stop-stall-ms"];

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `program` with `args`, killed if it outlives [`WAIT`].
fn run(program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Output {
    let mut command = Command::new(program);
    command.args(args).env_remove("LD_LIBRARY_PATH");
    run_bounded(command, b"", WAIT)
}

/// What the binary prints for `args`, after checking it succeeded.
fn generated(args: &[&str]) -> String {
    let output = run(binary(), args);
    assert!(output.status.success(), "{args:?}: {}", text(&output.stderr));
    let printed = text(&output.stdout);
    assert!(!printed.trim().is_empty(), "{args:?} printed nothing");
    printed
}

/// Whether `program` runs here (`--version` answers).
fn present(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|output| output.status.success())
}

/// Runs `program` with `args`, failing the test unless it succeeds; its stdout.
fn succeed(program: &str, args: &[&str]) -> String {
    let output = run(program, args);
    assert!(output.status.success(), "{program} {args:?}:\n{}{}", text(&output.stdout), text(&output.stderr));
    text(&output.stdout)
}

#[test]
fn each_shells_completions_name_the_commands_and_complete_in_that_shell() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["bash", "zsh", "fish"] {
        let script = generated(&["completions", name]);
        for command in COMMANDS {
            assert!(script.contains(command), "{name}'s completions name {command}");
        }
        for hidden in HIDDEN {
            assert!(!script.contains(hidden), "{name}'s completions offer {hidden}");
        }
        std::fs::write(dir.path().join(name), script).unwrap();
    }
    let file = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let bash = file("bash");
    if present("bash") {
        succeed("bash", &["-n", &bash]);
        // bash-completion calls the function registered for `opencode-pty` with the words so far, as here.
        let complete = |words: &str| {
            let script = format!(
                "source {bash}; spec=$(complete -p opencode-pty); function=${{spec#*-F }}; function=${{function%% *}}; \
                 COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
                 \"$function\" opencode-pty \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD - 1]}}\"; \
                 printf '%s\\n' \"${{COMPREPLY[@]}}\""
            );
            succeed("bash", &["-c", &script]).lines().map(str::to_owned).collect::<Vec<_>>()
        };
        assert_eq!(complete("opencode-pty st"), ["status", "stop"]);
        assert_eq!(complete("opencode-pty attach --t"), ["--takeover"], "a subcommand's options complete");
        assert_eq!(complete("opencode-pty list --j"), ["--json"]);
        assert!(complete("opencode-pty completions ''").ends_with(&["bash".into(), "zsh".into(), "fish".into()]));
    } else {
        eprintln!("bash is not installed: its completions were not loaded");
    }
    if present("zsh") {
        let zsh = file("zsh");
        succeed("zsh", &["-n", &zsh]);
        assert!(std::fs::read_to_string(&zsh).unwrap().starts_with("#compdef opencode-pty\n"));
        // compinit's own table: the function registered for the command.
        let home = tempfile::tempdir().unwrap();
        let script = format!(
            "HOME={home}; autoload -Uz compinit; compinit -u -D; source {zsh}; print -r -- $_comps[opencode-pty]",
            home = home.path().display()
        );
        assert_eq!(succeed("zsh", &["-f", "-c", &script]).trim(), "_opencode-pty");
    } else {
        eprintln!("zsh is not installed: its completions were not loaded");
    }
    if present("fish") {
        let fish = file("fish");
        succeed("fish", &["--no-execute", &fish]);
        let complete = |line: &str| {
            let found = succeed("fish", &["--no-config", "-c", &format!("source {fish}; complete -C '{line}'")]);
            found.lines().map(|line| line.split('\t').next().unwrap_or_default().to_owned()).collect::<Vec<_>>()
        };
        assert_eq!(complete("opencode-pty st"), ["status", "stop"]);
        assert_eq!(complete("opencode-pty attach --t"), ["--takeover"]);
        assert_eq!(complete("opencode-pty status --j"), ["--json"]);
    } else {
        eprintln!("fish is not installed: its completions were not loaded");
    }
}

/// The man(7) macros and roff requests a page may use (clap_mangen's string definition for `'` needs `ie`, `el`).
const REQUESTS: [&str; 14] = ["TH", "SH", "SS", "TP", "PP", "IP", "RS", "RE", "B", "I", "br", "sp", "ie", "el"];

/// Checks that `roff` is a man page: a `.TH` title, NAME and SYNOPSIS sections, only known requests, and, where
/// groff is installed, a rendering without a warning; returns its text as rendered (or the roff without groff).
fn check_page(roff: &str, title: &str) -> String {
    let mut lines = roff.lines().filter(|line| !line.starts_with(".ie") && !line.starts_with(".el"));
    assert!(lines.next().is_some_and(|line| line.starts_with(&format!(".TH {title} 1 "))), "{roff}");
    assert!(roff.contains("\n.SH NAME\n") && roff.contains("\n.SH SYNOPSIS\n"), "{roff}");
    for line in roff.lines().filter(|line| line.starts_with('.') || line.starts_with('\'')) {
        let request = line[1..].split_whitespace().next().unwrap_or_default();
        assert!(REQUESTS.contains(&request), "an unknown request in {line:?}");
    }
    if !present("groff") {
        eprintln!("groff is not installed: the page was not rendered");
        return roff.to_owned();
    }
    let page = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(page.path(), roff).unwrap();
    // -ww: every warning; -P-cbou: plain characters, no overstriking, to read back.
    let rendered = run("groff", &["-man", "-Tutf8", "-ww", "-P-cbou", page.path().to_str().unwrap()]);
    assert!(rendered.status.success() && rendered.stderr.is_empty(), "{}", text(&rendered.stderr));
    text(&rendered.stdout)
}

#[test]
fn the_man_page_is_roff_that_names_every_command_and_each_has_a_page() {
    let top = check_page(&generated(&["man"]), "opencode-pty");
    let top = top.replace("\\-", "-");
    assert!(top.contains("COMMANDS"), "{top}");
    for command in COMMANDS {
        assert!(top.contains(&format!("opencode-pty-{command}(1)")), "the page names {command}:\n{top}");
    }
    for hidden in HIDDEN {
        assert!(!top.contains(hidden), "the page names {hidden}");
    }
    let attach = check_page(&generated(&["man", "attach"]), "opencode-pty-attach").replace("\\-", "-");
    assert!(attach.contains("--takeover") && attach.contains("--observe"), "{attach}");
    let refused = run(binary(), &["man", "guard"]);
    assert!(!refused.status.success() && text(&refused.stderr).contains("no command \"guard\""));

    // `man --dir`: every page, as the release archive ships them.
    let dir = tempfile::tempdir().unwrap();
    let listed = generated(&["man", "--dir", dir.path().to_str().unwrap()]);
    let mut files: Vec<String> = listed.lines().map(|path| file_name(Path::new(path))).collect();
    files.sort();
    let mut expected: Vec<String> = COMMANDS.iter().map(|command| format!("opencode-pty-{command}.1")).collect();
    expected.push("opencode-pty.1".into());
    expected.sort();
    assert_eq!(files, expected);
    for file in &files {
        let roff = std::fs::read_to_string(dir.path().join(file)).unwrap();
        check_page(&roff, file.trim_end_matches(".1"));
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_str().unwrap().to_owned()
}
