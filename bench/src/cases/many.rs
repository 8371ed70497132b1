//! Case 9, many: a thousand idle `sh` terminals in one daemon (issue 31): how long they take to create, what
//! each costs in memory and threads (and how much of that is thread stacks), how often the idle daemon wakes,
//! how long `list` of them all takes (whole and in pages), and the echo of one more terminal among them, with
//! the first keystroke to an idle terminal (its threads asleep) beside the next one.

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use opencode_pty_client::{Client, CreatePty, Event, Mode, Role, Subscription};

use super::echo::{self, ATTACHMENT, READY};
use crate::daemon::{self, Daemon};
use crate::plan::Context;
use crate::stats::{Row, Table, Unit};
use crate::system;

/// The bound of waiting for a shell's prompt.
const PROMPT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the idle daemon's wake-ups are counted.
const IDLE_WINDOW: Duration = Duration::from_secs(2);

/// How long a terminal is left alone before its "first keystroke after idle" is sent.
const IDLE_BEFORE_WAKE: Duration = Duration::from_secs(1);

/// The page size of the paged `list`.
const PAGE: NonZeroU32 = NonZeroU32::new(100).expect("not zero");

/// The many table.
pub(super) async fn run(ctx: &Context) -> Result<Vec<Table>> {
    let plan = &ctx.plan;
    let n = plan.many_terminals;
    let wakes = plan.many_wakes.min(n);
    let mut table = Table::new(
        "many",
        "Many idle terminals",
        format!(
            "{n} 80x24 terminals running `sh` created one after the other through one connection (`create_pty` \
             answered), then every prompt awaited; memory and threads of the daemon before the first and after \
             the last prompt, and again once idle past the quiet delay, divided by {n}, with its memory mappings (the kernel allows `vm.max_map_count`, 65530 \
             by default) and its address space, and the machine's kernel stacks (threads cost 16 KiB each there, \
             outside the RSS; other processes' threads count too); thread stacks: the resident part of the daemon's thread stack \
             mappings (from `/proc/PID/smaps`) per thread. Idle wake-ups: the daemon's context switches per second \
             over {} s once every prompt is in and the daemon's RSS has settled past the quiet delay (each \
             terminal makes one compression pass {quiet} s after its last output, SPEC D18). Then `list` of every terminal ({} samples), the same through \
             pages of {PAGE} (`limit`/`after`, every page fetched), and the echo of one more terminal \
             running `stty raw -echo; cat` among them ({} round trips). Wake: {wakes} idle terminals, each \
             left alone {} s, get a keystroke (the shell's line discipline echoes it) and a second one right \
             after: the first wakes its sleeping threads.",
            IDLE_WINDOW.as_secs(),
            plan.many_lists,
            plan.echo_samples,
            IDLE_BEFORE_WAKE.as_secs(),
            quiet = daemon::QUIET_DELAY.as_secs(),
        ),
    );
    let create_total = table.add(Row::new("create_total", format!("create {n} terminals"), Unit::Milliseconds));
    let create_one = table.add(Row::new("create_one", "one `create_pty`", Unit::Milliseconds));
    let prompts = table.add(Row::new("prompts", format!("created and every prompt in, {n}"), Unit::Milliseconds));
    let rss_created =
        table.add(Row::new("rss_created", "daemon RSS per terminal, every prompt just in", Unit::Kibibytes));
    let rss = table.add(Row::new("rss", "daemon RSS per idle terminal (past the quiet delay)", Unit::Kibibytes));
    let threads = table.add(Row::new("threads", "daemon threads per idle terminal", Unit::Count));
    let stack_created =
        table.add(Row::new("stack_rss_created", "resident thread stack per thread, prompts just in", Unit::Kibibytes));
    let stack = table.add(Row::new("stack_rss", "resident thread stack per thread, idle", Unit::Kibibytes));
    let maps = table.add(Row::new("mappings", "daemon memory mappings per idle terminal", Unit::Count));
    let virt = table.add(Row::new("address_space", "daemon address space per idle terminal", Unit::Mebibytes));
    let kernel =
        table.add(Row::new("kernel_stacks", "kernel stacks per idle terminal (machine-wide)", Unit::Kibibytes));
    let wakeups = table.add(Row::new("idle_wakeups", "idle daemon's wake-ups per second", Unit::Count));
    let list = table.add(Row::new("list", format!("`list` of {n}"), Unit::Milliseconds));
    let paged = table.add(Row::new("list_paged", format!("`list` of {n} in pages of {PAGE}"), Unit::Milliseconds));
    let echo_row = table.add(Row::new("echo", format!("echo among {n} idle"), Unit::Milliseconds));
    let cold = table.add(Row::new("wake_first", "first keystroke to an idle terminal", Unit::Milliseconds));
    let warm =
        table.add(Row::new("wake_next", "next keystroke to the same terminal", Unit::Milliseconds).vs(&["wake_first"]));
    for _ in 0..plan.repetitions {
        let daemon = Daemon::start(&ctx.daemon, &ctx.fresh_dir("daemon")?).await?;
        let client = daemon.client();
        // A daemon without paged `list` (older builds) answers every process at once: not a page.
        let pages = client.ping().await?.features.iter().any(|feature| feature == "pages");
        if !pages {
            table.note(paged, "the daemon has no paged `list` (feature `pages`)");
        }
        let before = daemon.status()?;
        let space_before = system::address_space(daemon.pid())?;
        let kernel_before = system::kernel_stacks_kib()?;
        let cwd = ctx.work.display().to_string();
        let started = Instant::now();
        let mut ids = Vec::with_capacity(n);
        for i in 0..n {
            let one = Instant::now();
            let created = client.create_pty(CreatePty::new("sh", cwd.clone())).await;
            let id = created.with_context(|| format!("creating terminal {}", i + 1))?.id;
            table.push_sample(create_one, ms(one.elapsed()));
            ids.push(id);
        }
        table.push_sample(create_total, ms(started.elapsed()));
        for &id in &ids {
            wait_prompt(client, id).await?;
        }
        table.push_sample(prompts, ms(started.elapsed()));
        let after = daemon.status()?;
        let k = n.max(1) as f64;
        table.push_sample(rss_created, after.rss_kib.saturating_sub(before.rss_kib) as f64 / k);
        table.push_sample(threads, after.threads.saturating_sub(before.threads) as f64 / k);
        let space_after = system::address_space(daemon.pid())?;
        table.push_sample(kernel, system::kernel_stacks_kib()?.saturating_sub(kernel_before) as f64 / k);
        table.push_sample(maps, space_after.0.saturating_sub(space_before.0) as f64 / k);
        table.push_sample(virt, space_after.1.saturating_sub(space_before.1) as f64 / 1024.0 / k);
        let stacks = system::thread_stacks(daemon.pid())?;
        table.push_sample(stack_created, stacks.resident_kib as f64 / stacks.count.max(1) as f64);
        // Idle for good: past the quiet delay, after which each terminal makes its one compression pass (SPEC D18),
        // which gives back what its output left (the parser's stack pages, the allocator's free memory).
        daemon.settled_rss(daemon::QUIET_DELAY, daemon::SETTLE_LIMIT).await?;
        let idle = daemon.status()?;
        table.push_sample(rss, idle.rss_kib.saturating_sub(before.rss_kib) as f64 / k);
        let stacks = system::thread_stacks(daemon.pid())?;
        table.push_sample(stack, stacks.resident_kib as f64 / stacks.count.max(1) as f64);
        let switches = system::context_switches(daemon.pid())?;
        tokio::time::sleep(IDLE_WINDOW).await;
        let switched = system::context_switches(daemon.pid())?.saturating_sub(switches);
        table.push_sample(wakeups, switched as f64 / IDLE_WINDOW.as_secs_f64());
        for _ in 0..plan.many_lists {
            let one = Instant::now();
            let listed = client.list(Mode::Pty).await?;
            table.push_sample(list, ms(one.elapsed()));
            if listed.len() != n {
                bail!("`list` gave {} terminals of {n}", listed.len());
            }
            if pages {
                let one = Instant::now();
                let listed = client.list_all(Mode::Pty, PAGE).await?;
                table.push_sample(paged, ms(one.elapsed()));
                if listed.len() != n {
                    bail!("the paged `list` gave {} terminals of {n}", listed.len());
                }
            }
        }
        let echo_id = echo_terminal(client, &cwd).await?;
        let mut subscription = daemon::subscribe(client, echo_id, 0, ATTACHMENT, Role::Controller).await?;
        echo::wait_ready(&mut subscription).await?;
        let mut byte = b'a';
        for _ in 0..plan.echo_samples {
            table.push_sample(echo_row, echo::echo(client, echo_id, &mut subscription, echo::next(&mut byte)).await?);
        }
        drop(subscription);
        // A spread of the idle terminals, each subscribed as its controller, then all left alone.
        let step = (n / wakes.max(1)).max(1);
        let mut woken = Vec::with_capacity(wakes);
        for &id in ids.iter().step_by(step).take(wakes) {
            let subscription = daemon::subscribe(client, id, 0, ATTACHMENT, Role::Controller).await?;
            woken.push((id, subscription));
        }
        tokio::time::sleep(IDLE_BEFORE_WAKE).await;
        for (id, subscription) in &mut woken {
            table.push_sample(cold, keystroke(client, *id, subscription, echo::next(&mut byte)).await?);
            table.push_sample(warm, keystroke(client, *id, subscription, echo::next(&mut byte)).await?);
        }
        drop(woken);
        daemon.stop().await?;
    }
    Ok(vec![table.finish()])
}

/// Milliseconds.
fn ms(elapsed: Duration) -> f64 {
    elapsed.as_secs_f64() * 1e3
}

/// Waits until terminal `id` has printed something (its prompt), replay included.
async fn wait_prompt(client: &Client, id: u64) -> Result<()> {
    let mut subscription = daemon::subscribe(client, id, 0, "prompt", Role::Observer).await?;
    if !subscription.attached().replay.is_empty() {
        return Ok(());
    }
    let first = tokio::time::timeout(PROMPT_TIMEOUT, subscription.next()).await.context("no prompt")?;
    match first {
        Some(Ok(Event::Output { .. })) => Ok(()),
        other => bail!("an idle shell sent {other:?} instead of its prompt"),
    }
}

/// A terminal that echoes every byte raw, as the echo case's.
async fn echo_terminal(client: &Client, cwd: &str) -> Result<u64> {
    let command = format!("stty raw -echo; printf {}; exec cat", String::from_utf8_lossy(READY));
    let params = CreatePty { args: vec!["-c".into(), command], ..CreatePty::new("sh", cwd.to_owned()) };
    Ok(client.create_pty(params).await?.id)
}

/// One keystroke to an idle shell (as its controller), until its line discipline's echo comes back; ms.
async fn keystroke(client: &Client, id: u64, subscription: &mut Subscription, byte: u8) -> Result<f64> {
    echo::round_trip(client, id, subscription, byte, echo::Other::Skipped).await
}
