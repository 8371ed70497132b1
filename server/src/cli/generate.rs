//! `completions SHELL` and `man`: shell completions and roff man pages generated from the command line's own
//! clap definition (clap_complete, clap_mangen), so they name exactly the commands and options the binary takes.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, bail};
use clap::{CommandFactory, ValueEnum};

use super::Cli;

/// The binary's name, as completions complete it and man pages title it.
const BIN: &str = "opencode-pty";

/// A shell `completions` writes for: the ones the release archive ships and `install.sh` installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Shell {
    /// For bash-completion: `share/bash-completion/completions/opencode-pty`.
    Bash,
    /// For zsh's completion system: `share/zsh/site-functions/_opencode-pty`.
    Zsh,
    /// For fish: `share/fish/vendor_completions.d/opencode-pty.fish`.
    Fish,
}

impl Shell {
    /// clap_complete's name for it.
    fn generator(self) -> clap_complete::Shell {
        match self {
            Shell::Bash => clap_complete::Shell::Bash,
            Shell::Zsh => clap_complete::Shell::Zsh,
            Shell::Fish => clap_complete::Shell::Fish,
        }
    }
}

/// What the man page of `opencode-pty` itself says under DESCRIPTION.
const DESCRIPTION: &str = "opencode-pty keeps terminals (PTYs) and plain processes running for OpenCode, \
    apart from the program that started them: a client owns the daemon, creates processes, writes to them and \
    reads their output and screens over a Unix socket, and may leave and come back without losing a byte. Each \
    daemon lives in a runtime directory, ${XDG_STATE_HOME:-~/.local/state}/opencode/pty/NAME by default. The \
    commands below run one (daemon, play), look at or use a running one (status, list, attach, run, watch, \
    stop), and describe this program (completions, man, version).";

/// The command line as generators see it: its version given (the derive leaves `-V` to its own flag), so that
/// man pages carry it; no `help` subcommand, which only repeats `--help`; the heading of its commands and the
/// top page's NAME line and description written for a man page.
fn definition() -> clap::Command {
    let version = format!("{} (protocol {})", env!("CARGO_PKG_VERSION"), opencode_pty_protocol::PROTOCOL_VERSION);
    let mut command = Cli::command()
        .version(version)
        .disable_help_subcommand(true)
        .about("a persistent PTY and process daemon for OpenCode")
        .long_about(DESCRIPTION)
        .subcommand_help_heading("COMMANDS");
    command.build();
    command
}

/// `command` and its subcommands without what they hide: the daemon's own commands (`guard`, `resume`,
/// `upgrade-check`) and the options for tests. clap's completion generators would offer them all.
fn visible(command: &clap::Command) -> clap::Command {
    let mut copy = clap::Command::new(command.get_name().to_owned()).disable_help_subcommand(true);
    if let Some(about) = command.get_about() {
        copy = copy.about(about.clone());
    }
    copy = copy.disable_version_flag(true).args(command.get_arguments().filter(|arg| !arg.is_hide_set()).cloned());
    copy.subcommands(command.get_subcommands().filter(|sub| !sub.is_hide_set()).map(visible))
}

/// The name bash's script is generated for, then registered under [`BIN`]: clap_complete 4.6 spells the states of
/// a hyphenated binary's subcommands two ways in bash, so none of their options would complete (clap issue 6421).
const BASH_NAME: &str = "opencode_pty";

/// `completions SHELL`: the completion script for `shell`, written to `out`.
pub(super) fn completions(shell: Shell, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut buffer = Vec::new();
    let name = if shell == Shell::Bash { BASH_NAME } else { BIN };
    clap_complete::generate(shell.generator(), &mut visible(&Cli::command()), name, &mut buffer);
    if shell == Shell::Bash {
        buffer = register_bash_for_bin(&String::from_utf8(buffer)?).into_bytes();
    }
    out.write_all(&buffer)?;
    out.flush()?;
    Ok(())
}

/// `script`, made for [`BASH_NAME`], with its `complete` lines naming [`BIN`] instead.
fn register_bash_for_bin(script: &str) -> String {
    let suffix = format!(" {BASH_NAME}");
    script
        .lines()
        .map(|line| match line.strip_suffix(&suffix) {
            Some(head) if line.trim_start().starts_with("complete ") => format!("{head} {BIN}\n"),
            _ => format!("{line}\n"),
        })
        .collect()
}

/// The man page of `opencode-pty` (no `command`) or of `opencode-pty COMMAND`: its file name and its roff text.
pub(super) fn man_page(command: Option<&str>) -> anyhow::Result<(String, Vec<u8>)> {
    let top = definition();
    let page = match command {
        None => top,
        Some(name) => match top.find_subcommand(name) {
            Some(sub) if !sub.is_hide_set() => sub.clone(),
            _ => bail!("no command {name:?} has a man page; `{BIN} --help` lists the commands"),
        },
    };
    // No date (a page made at build time would otherwise differ between two builds of one commit), written as
    // an empty argument: clap_mangen leaves an empty one out, and the source and manual after it would move up.
    let man = clap_mangen::Man::new(page)
        .date("\"\"")
        .source(format!("{BIN} {}", env!("CARGO_PKG_VERSION")))
        .manual("opencode-pty manual");
    let mut roff = Vec::new();
    man.render(&mut roff)?;
    Ok((man.get_filename(), roff))
}

/// The names of the commands with a page of their own (every visible one), in the order `--help` lists them.
fn paged_commands() -> Vec<String> {
    definition().get_subcommands().filter(|sub| !sub.is_hide_set()).map(|sub| sub.get_name().to_owned()).collect()
}

/// `man`: one page to `out`, or with `dir`, every page (`opencode-pty.1` and `opencode-pty-COMMAND.1` for each
/// command, which the first one's COMMANDS section names) written into it, each file's path printed to `out`.
pub(super) fn man(command: Option<&str>, dir: Option<&Path>, out: &mut dyn Write) -> anyhow::Result<()> {
    let Some(dir) = dir else {
        let (_, roff) = man_page(command)?;
        out.write_all(&roff)?;
        out.flush()?;
        return Ok(());
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let pages = std::iter::once(None).chain(paged_commands().into_iter().map(Some));
    for name in pages {
        let (file, roff) = man_page(name.as_deref())?;
        let path = dir.join(file);
        std::fs::write(&path, roff).with_context(|| format!("cannot write {}", path.display()))?;
        writeln!(out, "{}", path.display())?;
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commands a user runs; each must be completed and have a page.
    const VISIBLE: [&str; 8] = ["daemon", "play", "status", "list", "attach", "run", "watch", "stop"];

    #[test]
    fn every_shell_completes_the_visible_commands_and_none_of_the_hidden_ones() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let mut script = Vec::new();
            completions(shell, &mut script).unwrap();
            let script = String::from_utf8(script).unwrap();
            for command in VISIBLE.iter().chain(&["completions", "man"]) {
                assert!(script.contains(command), "{shell:?} completes {command}");
            }
            assert!(script.contains("takeover") && script.contains("json"), "{shell:?} completes options");
            assert!(!script.contains("upgrade-check") && !script.contains("--handoff-ttl-ms"), "{shell:?}");
        }
    }

    #[test]
    fn every_visible_command_has_a_page_and_a_hidden_one_has_none() {
        assert_eq!(paged_commands()[..VISIBLE.len()], VISIBLE);
        let (file, roff) = man_page(None).unwrap();
        assert_eq!(file, "opencode-pty.1");
        let roff = String::from_utf8(roff).unwrap();
        let title = ".TH opencode-pty 1 \"\" \"opencode-pty 0.1.0\" \"opencode-pty manual\"\n";
        assert!(roff.contains(title), "{roff}");
        for command in VISIBLE {
            assert!(roff.contains(&format!("opencode\\-pty\\-{command}(1)")), "the page names {command}:\n{roff}");
        }
        let (file, attach) = man_page(Some("attach")).unwrap();
        assert_eq!(file, "opencode-pty-attach.1");
        assert!(String::from_utf8(attach).unwrap().contains("takeover"));
        assert!(man_page(Some("guard")).is_err() && man_page(Some("nothing")).is_err());
    }
}
