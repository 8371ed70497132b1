//! Runs the web terminal example's browser tests (`examples/web-terminal/`: Node's test runner driving headless
//! Chromium through playwright-core) against the daemon binary this build produced, so `cargo test --workspace
//! --locked` covers a terminal in a real browser with both renderers. Each step's screenshot is kept under
//! `target/tmp/web-terminal/<renderer>/`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use opencode_pty_testkit::node::{ensure_installed, npm_test, require_node};

/// How long `npm test` may take: building the client, then two renderers' seven steps, each bounded by its own
/// 90 s (about 15 s each when the machine is idle).
const TEST_TIMEOUT: Duration = Duration::from_secs(900);

/// The Chromium the tests drive when `CHROMIUM` does not name one: Debian's package, which `.ci/run` installs.
const DEBIAN_CHROMIUM: &str = "/usr/bin/chromium";

/// The screenshots every renderer's run leaves, one per step.
const STEPS: [&str; 12] = [
    "01-echo-hi",
    "02-less",
    "03-less-reloaded",
    "04-less-quit",
    "05-resized",
    "06-two-tabs-first",
    "06-two-tabs-second",
    "07-takeover-first",
    "07-takeover-second",
    "08-reload-during-output",
    "08-history-reloaded",
    "09-exited",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// The page in Chromium: typing, `less` across a reload, resizing (`stty size`), two tabs, a takeover, a reload
/// during output without a lost or repeated line, 10,000 lines of history back after a reload, the exit; with ghostty-web and with xterm.js. The Node tests
/// compare the page's terminal text with the daemon's snapshot at each step; here, every step's screenshot is
/// checked to exist.
#[test]
fn the_web_terminal_works_in_headless_chromium() {
    require_node("the web terminal's browser tests");
    let chromium = std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from(DEBIAN_CHROMIUM), PathBuf::from);
    assert!(
        chromium.is_file(),
        "the web terminal's browser tests need Chromium at {} (Debian: `apt-get install chromium`, which \
         .ci/run does; or set CHROMIUM to another Chromium binary)",
        chromium.display()
    );
    let example = root().join("examples/web-terminal");
    ensure_installed(&root().join("client-ts"));
    ensure_installed(&example);
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-terminal");
    if out.exists() {
        std::fs::remove_dir_all(&out).expect("removing the last run's screenshots");
    }
    let binary = Path::new(env!("CARGO_BIN_EXE_opencode-pty"));
    let envs = [("OPENCODE_PTY_BIN", binary), ("WEB_TERMINAL_OUT", out.as_path()), ("CHROMIUM", chromium.as_path())];
    npm_test(
        &example,
        &envs,
        TEST_TIMEOUT,
        &format!("web terminal in {} (screenshots in {})", chromium.display(), out.display()),
    );
    for renderer in ["ghostty", "xterm"] {
        for step in STEPS {
            let shot = out.join(renderer).join(format!("{step}.png"));
            let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
            assert!(size > 0, "no screenshot {}", shot.display());
        }
    }
}
