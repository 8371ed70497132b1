//! Case 6, pipe processes: the pipe file through a pipe process (`cat FILE`, output to a file) until `wait`
//! answers, against the shell doing the same with one copy more (`cat FILE | cat > OUT`, a pipe and a copy,
//! like ours) and directly (`cat FILE > OUT`); then `get` latency while the child writes many short lines,
//! against `get` of an idle pipe process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use opencode_pty_client::{Client, CreatePipe};

use crate::daemon::Daemon;
use crate::fifo::quote;
use crate::plan::Context;
use crate::stats::{Row, Table, Unit, mb_per_s};
use crate::system;

/// The pipes table.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let plan = &ctx.plan;
    let size = crate::data::human(plan.pipe_bytes);
    let lines = plan.pipe_lines;
    let mut table = Table::new(
        "pipes",
        "Pipe processes",
        format!(
            "{size} of log text: a pipe process running `cat FILE` into its output file, from `create_pipe` \
             to the answer of `wait`, against `sh -c 'cat FILE | cat > OUT'` and `sh -c 'cat FILE > OUT'`; MB/s. \
             Then `get` of a pipe process whose `sh` writes {lines} lines with `echo`, repeated until it exits, \
             against `get` of an idle pipe process (`sleep`); each `get` is its own connection."
        ),
    );
    let ours = table.add(
        Row::new("daemon", "pipe process to its file", Unit::MegabytesPerSecond).vs(&["cat_pipe_cat", "cat_redirect"]),
    );
    let piped = table.add(Row::new("cat_pipe_cat", "`cat FILE | cat > OUT`", Unit::MegabytesPerSecond));
    let direct = table.add(Row::new("cat_redirect", "`cat FILE > OUT`", Unit::MegabytesPerSecond));
    let get_idle = table.add(Row::new("get_idle", "`get`, idle pipe process", Unit::Milliseconds));
    let get_busy = table
        .add(Row::new("get_busy", format!("`get` while writing {lines} lines"), Unit::Milliseconds).vs(&["get_idle"]));
    let daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
    let client = daemon.client();
    let file = &ctx.files.pipe;
    let bytes = crate::data::file_len(file)?;
    let cat = which("cat")?;
    let sh = which("sh")?;
    for _ in 0..plan.repetitions {
        let dir = ctx.fresh_dir("pipes")?;
        let out = dir.join("out");
        let started = Instant::now();
        let mut params =
            CreatePipe::new(cat.display().to_string(), dir.display().to_string(), out.display().to_string());
        params.args = vec![file.display().to_string()];
        let id = client.create_pipe(params).await?.id;
        let exited = tokio::time::timeout(plan.timeout(), client.wait(id)).await.context("no `exited` in time")??;
        table.push_sample(ours, mb_per_s(bytes, started.elapsed().as_secs_f64()));
        ensure!(exited.final_offset == bytes, "the pipe process wrote {} of {bytes} bytes", exited.final_offset);
        client.terminate(id).await?;
        std::fs::remove_file(&out)?;
        let pipeline = format!("cat {} | cat > {}", quote(file), quote(&out));
        table.push_sample(piped, mb_per_s(bytes, shell(&sh, &pipeline, plan.timeout())?));
        std::fs::remove_file(&out)?;
        table.push_sample(
            direct,
            mb_per_s(bytes, shell(&sh, &format!("cat {} > {}", quote(file), quote(&out)), plan.timeout())?),
        );
        std::fs::remove_file(&out)?;

        let idle = start_pipe(client, &sh, &dir, "exec sleep 1000").await?;
        for _ in 0..plan.request_samples {
            table.push_sample(get_idle, timed_get(client, idle).await?);
        }
        client.terminate(idle).await?;
        let writer =
            format!("i=0; while [ $i -lt {lines} ]; do echo \"line $i of the pipe benchmark\"; i=$((i+1)); done");
        let busy = start_pipe(client, &sh, &dir, &writer).await?;
        let deadline = Instant::now() + plan.timeout();
        loop {
            let started = Instant::now();
            let info = client.get(busy).await?;
            table.push_sample(get_busy, started.elapsed().as_secs_f64() * 1e3);
            if info.exited_at.is_some() {
                break;
            }
            ensure!(Instant::now() < deadline, "the line writer did not finish in time");
        }
        client.terminate(busy).await?;
    }
    daemon.stop().await?;
    Ok(vec![table.finish()])
}

/// Starts a pipe process running `script` under `sh`, writing to a file in `dir`.
async fn start_pipe(client: &Client, sh: &Path, dir: &Path, script: &str) -> Result<u64> {
    let out = dir.join("lines");
    let mut params = CreatePipe::new(sh.display().to_string(), dir.display().to_string(), out.display().to_string());
    params.args = vec!["-c".into(), script.into()];
    params.env = HashMap::from([("PATH".to_owned(), std::env::var("PATH").unwrap_or_default())]);
    Ok(client.create_pipe(params).await?.id)
}

/// One `get`, in milliseconds.
async fn timed_get(client: &Client, id: u64) -> Result<f64> {
    let started = Instant::now();
    client.get(id).await?;
    Ok(started.elapsed().as_secs_f64() * 1e3)
}

/// Runs `sh -c script` and returns its seconds.
fn shell(sh: &Path, script: &str, limit: Duration) -> Result<f64> {
    let started = Instant::now();
    let output = tokio::task::block_in_place(|| system::run(Command::new(sh).args(["-c", script]), limit))?;
    ensure!(output.status.success(), "`{script}` failed: {}", String::from_utf8_lossy(&output.stderr));
    Ok(started.elapsed().as_secs_f64())
}

/// The absolute path of `program` on `PATH` (a pipe process inherits no `PATH`).
pub(super) fn which(program: &str) -> Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .with_context(|| format!("{program} is not on PATH"))
}
