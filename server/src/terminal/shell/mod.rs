//! Shell integration (`create_pty`'s `shell_integration`): which shells it supports, the per-terminal script
//! that makes them write nonce'd OSC 133 marks, how the shell is started to read it, and (in `marks.rs` and
//! `tracker.rs`) what the actor learns from the marks.
//!
//! The script is written for one terminal into the daemon's runtime directory (`shell/`, private), holds the
//! terminal's random nonce, and is removed when the terminal is dropped (and with the runtime directory). Its
//! location travels in the shell's arguments (bash `--rcfile`, fish `--init-command`); zsh has no such option,
//! so ZDOTDIR points at a folder of ours, whose `.zshenv` gives the user's ZDOTDIR back before any of the
//! user's files runs. No other variable of the environment the request gave changes.

mod capture;
mod marks;
mod tracker;

use std::collections::HashMap;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub(crate) use capture::{Capture, CommandText};
pub(crate) use tracker::{Change, Tracker, starting};

use crate::error::ServiceError;

/// The folder of the runtime directory that holds the scripts.
pub(crate) const SHELL_DIR: &str = "shell";

/// The shells shell integration supports, as the error that refuses any other program says.
pub(crate) const SUPPORTED_SHELLS: &str = "bash, zsh and fish";

/// Where a script may be written: a private folder (0700) with private files (0600).
const PRIVATE_DIR_MODE: u32 = 0o700;
const PRIVATE_FILE_MODE: u32 = 0o600;

const BASH_SCRIPT: &str = include_str!("scripts/integration.bash");
const FISH_SCRIPT: &str = include_str!("scripts/integration.fish");
const ZSH_FILES: [(&str, &str); 5] = [
    (".zshenv", include_str!("scripts/zsh/zshenv.zsh")),
    (".zprofile", include_str!("scripts/zsh/zprofile.zsh")),
    (".zshrc", include_str!("scripts/zsh/zshrc.zsh")),
    (".zlogin", include_str!("scripts/zsh/zlogin.zsh")),
    ("integration.zsh", include_str!("scripts/zsh/integration.zsh")),
];

/// A shell shell integration supports, known by the program's file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl Shell {
    /// The shell `program` names (`bash`, `/usr/bin/zsh`, ...), or the error that names the supported ones.
    pub(crate) fn of(program: &str) -> Result<Shell, ServiceError> {
        match Path::new(program).file_name().and_then(|name| name.to_str()) {
            Some("bash") => Ok(Shell::Bash),
            Some("zsh") => Ok(Shell::Zsh),
            Some("fish") => Ok(Shell::Fish),
            _ => Err(ServiceError::invalid(format!(
                "shell integration supports {SUPPORTED_SHELLS} (by the program's file name), not {program}"
            ))),
        }
    }
}

/// How the shell of one terminal is started with its integration, and the files that hold it (removed when
/// this is dropped).
#[derive(Debug)]
pub(crate) struct Launch {
    /// The terminal's nonce, which its marks carry.
    pub(crate) nonce: String,
    /// The arguments the shell gets, ours and the request's.
    pub(crate) args: Vec<String>,
    /// ZDOTDIR for zsh; nothing for the other shells.
    pub(crate) env: Option<(String, String)>,
    /// What to remove: a file, or zsh's folder.
    path: PathBuf,
}

impl Launch {
    /// Keeps the script's files (for the terminal rebuilt from an upgrade's state, which removes them): where
    /// they are.
    pub(crate) fn keep(mut self) -> PathBuf {
        std::mem::take(&mut self.path)
    }

    /// The files an upgrade's state says terminal's shell integration left (`keep`), removed when this is dropped.
    pub(crate) fn adopt(nonce: String, path: PathBuf) -> Launch {
        Launch { nonce, args: Vec::new(), env: None, path }
    }
}

impl Drop for Launch {
    fn drop(&mut self) {
        // Kept for a successor.
        if self.path.as_os_str().is_empty() {
            return;
        }
        let removed = if self.path.is_dir() { fs::remove_dir_all(&self.path) } else { fs::remove_file(&self.path) };
        if let Err(error) = removed
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(%error, path = %self.path.display(), "cannot remove a shell integration script");
        }
    }
}

/// Writes terminal `id`'s script into `dir` (the runtime directory's [`SHELL_DIR`], made if missing; the runtime
/// directory itself must exist) and says
/// how to start `program` with `args` to read it. `zdotdir` is ZDOTDIR as the child would get it.
pub(crate) fn prepare(
    dir: &Path,
    id: u64,
    program: &str,
    args: &[String],
    zdotdir: Option<&str>,
) -> Result<Launch, ServiceError> {
    let shell = Shell::of(program)?;
    let failed = |e: std::io::Error| ServiceError::system("cannot write the shell integration script", e);
    // Not recursive: a runtime directory removed under the daemon is its watch's to make again, not ours.
    match fs::DirBuilder::new().mode(PRIVATE_DIR_MODE).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(failed(e)),
        _ => {}
    }
    let nonce = format!("{:032x}", rand::random::<u128>());
    let header = format!("__opty_nonce={nonce}\n");
    match shell {
        Shell::Bash => {
            let path = dir.join(format!("terminal-{id}.bash"));
            let (login, rest) = without_login_option(args);
            let text = format!("{header}__opty_login={}\n{BASH_SCRIPT}", u8::from(login));
            write_private(&path, &text).map_err(failed)?;
            let mut args = vec!["--rcfile".to_owned(), path.display().to_string()];
            args.extend(rest);
            Ok(Launch { nonce, args, env: None, path })
        }
        Shell::Fish => {
            let path = dir.join(format!("terminal-{id}.fish"));
            write_private(&path, &format!("set -g {}\n{FISH_SCRIPT}", header.trim_end().replace('=', " ")))
                .map_err(failed)?;
            let mut launch_args = vec!["--init-command".to_owned(), format!("source {}", fish_quote(&path))];
            launch_args.extend(args.iter().cloned());
            Ok(Launch { nonce, args: launch_args, env: None, path })
        }
        Shell::Zsh => {
            let path = dir.join(format!("terminal-{id}-zsh"));
            fs::DirBuilder::new().mode(PRIVATE_DIR_MODE).create(&path).map_err(failed)?;
            // From here on, dropping the launch removes the folder.
            let launch = Launch {
                nonce: nonce.clone(),
                args: args.to_vec(),
                env: Some(("ZDOTDIR".to_owned(), path.display().to_string())),
                path: path.clone(),
            };
            let user = match zdotdir {
                Some(value) => format!("__opty_user_zdotdir_set=1\n__opty_user_zdotdir={}\n", sh_quote(value)),
                None => "__opty_user_zdotdir_set=0\n".to_owned(),
            };
            for (name, text) in ZSH_FILES {
                let text = if name == ".zshenv" { format!("{header}{user}{text}") } else { text.to_owned() };
                write_private(&path.join(name), &text).map_err(failed)?;
            }
            Ok(launch)
        }
    }
}

/// ZDOTDIR as a child started with `env` over the daemon's environment (less `withheld`) gets it.
pub(crate) fn child_zdotdir(env: &HashMap<String, String>, withheld: &[String]) -> Option<String> {
    match env.get("ZDOTDIR") {
        Some(value) => Some(value.clone()),
        None if withheld.iter().any(|name| name == "ZDOTDIR") => None,
        None => std::env::var("ZDOTDIR").ok(),
    }
}

/// Bash reads an rcfile only when it is not a login shell: `-l` or `--login` among the leading options is taken
/// out, and the script reads the login files itself. Answers whether it was there, and the other arguments.
fn without_login_option(args: &[String]) -> (bool, Vec<String>) {
    let mut login = false;
    let mut rest = Vec::with_capacity(args.len());
    let mut options = true;
    for arg in args {
        if options && (arg == "-l" || arg == "--login") {
            login = true;
            continue;
        }
        // The first argument that is not an option ends them (a script's own `-l` is the script's).
        if !arg.starts_with('-') || arg == "--" || arg == "-" {
            options = false;
        }
        rest.push(arg.clone());
    }
    (login, rest)
}

/// Writes a new private file (0600).
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = fs::OpenOptions::new().write(true).create(true).truncate(true).mode(PRIVATE_FILE_MODE).open(path)?;
    file.write_all(text.as_bytes())
}

/// `value` single-quoted for sh and zsh.
fn sh_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// `path` single-quoted for fish (which escapes `\` and `'` inside single quotes).
fn fish_quote(path: &Path) -> String {
    let text = path.display().to_string();
    format!("'{}'", text.replace('\\', r"\\").replace('\'', r"\'"))
}

#[cfg(test)]
mod tests;
