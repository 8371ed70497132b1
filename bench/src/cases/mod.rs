//! The cases of issue 14, one module each, and the order a run takes them in. Each returns its tables; a case
//! that fails leaves a table with the error instead, and the run goes on.

mod attach;
mod commands;
mod echo;
mod ingest;
mod many;
mod memory;
mod memory_busy;
mod memory_terminals;
mod pipes;
mod quiet;
mod requests;
mod scale;
mod upgrade;
mod web;

use std::future::Future;
use std::pin::Pin;

use anyhow::Result;

pub(crate) use memory::vt_memory_command;

use crate::plan::Context;
use crate::stats::{Row, Table, Unit};

/// A case: its name and how to run it.
type Case = (&'static str, for<'a> fn(&'a Context) -> Pin<Box<dyn Future<Output = Result<Vec<Table>>> + 'a>>);

/// Every case, in order.
pub(crate) const CASES: [Case; 13] = [
    ("ingest", |ctx| Box::pin(ingest::run(ctx))),
    ("echo", |ctx| Box::pin(echo::run(ctx))),
    ("scale", |ctx| Box::pin(scale::run(ctx))),
    ("memory", |ctx| Box::pin(memory::run(ctx))),
    ("memory-terminals", |ctx| Box::pin(memory_terminals::run(ctx))),
    ("memory-busy", |ctx| Box::pin(memory_busy::run(ctx))),
    ("many", |ctx| Box::pin(many::run(ctx))),
    ("pipes", |ctx| Box::pin(pipes::run(ctx))),
    ("requests", |ctx| Box::pin(requests::run(ctx))),
    ("commands", |ctx| Box::pin(commands::run(ctx))),
    ("upgrade", |ctx| Box::pin(upgrade::run(ctx))),
    ("quiet", |ctx| Box::pin(quiet::run(ctx))),
    ("web", |ctx| Box::pin(web::run(ctx))),
];

/// Whether the case `name` runs under `filter`: the case of that name if there is one, else every case whose
/// name contains it, every case without one.
fn selected(name: &str, filter: Option<&str>) -> bool {
    let Some(filter) = filter else { return true };
    if CASES.iter().any(|(case, _)| *case == filter) { name == filter } else { name.contains(filter) }
}

/// Runs the case named `filter`, or if none is, the cases whose name contains it (all without one): `memory`
/// alone, `memory-` all but it. A failed case becomes a table holding its error, and `failed` is set.
pub(crate) async fn run_all(ctx: &Context, filter: Option<&str>, failed: &mut bool) -> Vec<Table> {
    let mut tables = Vec::new();
    for (name, run) in CASES {
        if !selected(name, filter) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_is_chosen_by_its_whole_name_before_a_part_of_it() {
        let chosen = |filter| CASES.iter().map(|(name, _)| *name).filter(|name| selected(name, filter)).collect();
        let all: Vec<&str> = chosen(None);
        assert_eq!(all.len(), CASES.len());
        assert_eq!(chosen(Some("memory")), vec!["memory"]);
        assert_eq!(chosen(Some("memory-")), vec!["memory-terminals", "memory-busy"]);
        assert_eq!(chosen(Some("busy")), vec!["memory-busy"]);
        assert_eq!(chosen(Some("nothing")), Vec::<&str>::new());
    }
}
