//! The cases of issue 14, one module each, and the order a run takes them in. Each returns its tables; a case
//! that fails leaves a table with the error instead, and the run goes on.

mod commands;
mod echo;
mod ingest;
mod many;
mod memory;
mod pipes;
mod requests;
mod scale;
mod upgrade;

use std::future::Future;
use std::pin::Pin;

use anyhow::Result;

pub(crate) use memory::vt_memory_command;

use crate::plan::Context;
use crate::stats::{Row, Table, Unit};

/// A case: its name and how to run it.
type Case = (&'static str, for<'a> fn(&'a Context) -> Pin<Box<dyn Future<Output = Result<Vec<Table>>> + 'a>>);

/// Every case, in order.
pub(crate) const CASES: [Case; 9] = [
    ("ingest", |ctx| Box::pin(ingest::run(ctx))),
    ("echo", |ctx| Box::pin(echo::run(ctx))),
    ("scale", |ctx| Box::pin(scale::run(ctx))),
    ("memory", |ctx| Box::pin(memory::run(ctx))),
    ("many", |ctx| Box::pin(many::run(ctx))),
    ("pipes", |ctx| Box::pin(pipes::run(ctx))),
    ("requests", |ctx| Box::pin(requests::run(ctx))),
    ("commands", |ctx| Box::pin(commands::run(ctx))),
    ("upgrade", |ctx| Box::pin(upgrade::run(ctx))),
];

/// Runs the cases whose name contains `filter` (all without one); a failed case becomes a table holding its
/// error, and `failed` is set.
pub(crate) async fn run_all(ctx: &Context, filter: Option<&str>, failed: &mut bool) -> Vec<Table> {
    let mut tables = Vec::new();
    for (name, run) in CASES {
        if filter.is_some_and(|filter| !name.contains(filter)) {
            continue;
        }
        println!("== {name}");
        let started = std::time::Instant::now();
        match run(ctx).await {
            Ok(done) => {
                for table in &done {
                    crate::report::print_table(table);
                }
                tables.extend(done);
            }
            Err(error) => {
                *failed = true;
                println!("   FAILED: {error:#}");
                let mut table = Table::new(name, name, "The case failed.");
                let row = table.add(Row::new("error", "error", Unit::Count));
                table.note(row, format!("{error:#}"));
                tables.push(table.finish());
            }
        }
        println!("   ({:.1} s)", started.elapsed().as_secs_f64());
    }
    tables
}
