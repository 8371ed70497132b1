//! Case 8, the in-place upgrade (issue 30): the daemon re-executes a private copy of its own binary through
//! `upgrade` on the owner channel. `pause`: how long the output of busy terminals stops (1, 16 and 100 of
//! them; the goal is under 100 ms at 16) and how long `upgrade` takes to be answered; `phases`: where that
//! time goes, by the daemon's log; `echo`: the echo round trip of a terminal while an upgrade happens, beside
//! the same round trip without one.

mod echo;
mod pause;
mod phases;

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;

use anyhow::{Context as _, Result};

use crate::plan::Context;
use crate::stats::Table;

/// The upgrade tables: the pause, where its time goes, then the echo.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let program = private_copy(ctx)?;
    let [pause, phases] = pause::run(ctx, &program).await?;
    Ok(vec![pause, phases, echo::run(ctx, &program).await?])
}

/// A copy of the daemon binary the daemon accepts to upgrade to: mode 0755, ours, in a folder of its own that
/// only we can enter. Made before anything is started, so no child can hold it open for writing when the
/// daemon executes it.
fn private_copy(ctx: &Context) -> Result<PathBuf> {
    let dir = ctx.fresh_dir("upgrade-program")?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    let copy = dir.join("opencode-pty");
    std::fs::copy(&ctx.daemon, &copy)
        .with_context(|| format!("copying {} to {}", ctx.daemon.display(), copy.display()))?;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755))?;
    Ok(copy)
}
