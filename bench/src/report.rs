//! The report of a run: `Results` (what `results.json` holds), the tables as printed to stdout, and
//! `BENCHMARKS.md` rendered from the results, with the machine, the charts and how to reproduce.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::stats::{Row, Table, Unit};
use crate::system::Machine;

/// Everything a run found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Results {
    /// When the run started (UTC, as `date -u` wrote it).
    pub date: String,
    /// How long the run took, in seconds.
    pub seconds: f64,
    /// The daemon binary measured.
    pub daemon: String,
    /// The machine and tools.
    pub machine: Machine,
    /// Sizes and repetitions.
    pub plan: Plan,
    /// One table per case (ingest gives two).
    pub tables: Vec<Table>,
}

impl Results {
    /// The table `case`.
    pub(crate) fn table(&self, case: &str) -> Option<&Table> {
        self.tables.iter().find(|table| table.case == case)
    }
}

/// A number with about three significant digits.
pub(crate) fn number(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 100.0 || magnitude == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else if magnitude >= 0.01 {
        format!("{value:.3}")
    } else {
        format!("{value:.4}")
    }
}

/// A value with its unit.
fn with_unit(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Count => number(value),
        Unit::Ratio => format!("{}x", number(value)),
        _ => format!("{} {}", number(value), unit.label()),
    }
}

/// `text` made safe inside a markdown table cell (a `|`, even in code, would end the cell).
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The row's comparisons, as `0.54x vt_parse, 0.94x tmux`.
fn ratios(row: &Row) -> String {
    row.ratios.iter().map(|ratio| format!("{}x {}", number(ratio.value), ratio.vs_label)).collect::<Vec<_>>().join(", ")
}

/// Prints one table to stdout: median, min, max (p99 for times), the ratios, and notes.
pub(crate) fn print_table(table: &Table) {
    println!("   {}", table.title);
    for row in &table.rows {
        match row.summary {
            Some(s) => {
                let p99 =
                    if row.unit == Unit::Milliseconds { format!(" p99 {}", number(s.p99)) } else { String::new() };
                let vs = ratios(row);
                let vs = if vs.is_empty() { vs } else { format!("  [{vs}]") };
                println!(
                    "   {:<44} {:>14}  (min {}, max {}{p99}, n {}){vs}",
                    row.label,
                    with_unit(s.median, row.unit),
                    number(s.min),
                    number(s.max),
                    s.n
                );
            }
            None => println!("   {:<44} {:>14}", row.label, "–"),
        }
        if let Some(note) = &row.note {
            println!("   {:<44}   note: {note}", "");
        }
    }
}

/// An earlier run kept for comparison (`bench/before.json`): its results and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Before {
    /// What the earlier run measured, for people ("main at 60087c6, before ...").
    pub what: String,
    /// Its results, as its results.json held them.
    pub results: Results,
}

/// The "before and after" section: every row with comparisons in both runs, its median and its ratios then and
/// now. Ratios are taken within each run, so they compare across runs on a noisy machine where the absolute
/// figures do not.
fn before_and_after(out: &mut String, before: &Before, after: &Results) {
    let _ = writeln!(
        out,
        "## Before and after
"
    );
    let _ = writeln!(
        out,
        "Against an earlier run kept in [`bench/before.json`](bench/before.json): {}, on {}. Each ratio is taken \
         within its own run (the machine's load differs between runs; the ratios are what compare).\n",
        before.what, before.results.date
    );
    let _ =
        writeln!(out, "| case | figure | before | after | ratios before | ratios after |\n|---|---|---:|---:|---|---|");
    for table in &after.tables {
        let Some(earlier) = before.results.table(&table.case) else { continue };
        for row in table.rows.iter().filter(|row| !row.ratios.is_empty()) {
            let Some(old) = earlier.rows.iter().find(|old| old.key == row.key) else { continue };
            let (Some(now), Some(then)) = (row.summary, old.summary) else { continue };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                table.case,
                cell(&row.label),
                with_unit(then.median, old.unit),
                with_unit(now.median, row.unit),
                cell(&ratios(old)),
                cell(&ratios(row))
            );
        }
    }
    let _ = writeln!(out);
}

/// `BENCHMARKS.md` for a run's results; `results_link` and `charts` are where results.json and the charts are,
/// relative to the markdown file; `before`, an earlier run to compare with.
pub(crate) fn markdown(
    results: &Results,
    results_link: &str,
    charts: &[(&str, &str)],
    before: Option<&Before>,
) -> String {
    let mut out = String::new();
    let m = &results.machine;
    let _ = writeln!(out, "# Benchmarks\n");
    let _ = writeln!(
        out,
        "Generated by the benchmark harness (`bench/`, issue 14) on {}, commit `{}`, in {:.0} s. Do not edit: run \
         it again (below). Every figure is the median of {} interleaved repetitions ({} for the scale case, one run \
         for memory against terminals and for busy terminals; min and max beside it; p99 of all samples for \
         times), and \
         every ratio is taken between medians of this same run, on the same generated data. For MB/s a ratio \
         above 1 is faster than the baseline; for times, slower. The raw samples are in \
         [`{results_link}`]({results_link}).\n",
        results.date, m.commit, results.seconds, results.plan.repetitions, results.plan.scale_repetitions
    );
    let _ = writeln!(out, "## Machine\n");
    let _ = writeln!(out, "| | |\n|---|---|");
    let _ = writeln!(out, "| CPU | {} |", m.cpu);
    let _ = writeln!(out, "| cores | {} |", m.cores);
    let _ = writeln!(out, "| memory | {} MiB |", m.memory_mib);
    let _ = writeln!(out, "| kernel | {} |", m.kernel);
    let _ = writeln!(out, "| rustc | {} |", m.rustc);
    let _ = writeln!(out, "| tmux | {} |", m.tmux);
    let _ = writeln!(out, "| libghostty-vt | {} |\n", m.libghostty_vt);
    let _ = writeln!(out, "## How to reproduce\n");
    let _ = writeln!(
        out,
        "```sh\njust bench            # or: cargo build --release -p opencode-pty -p opencode-pty-bench && \
         target/release/opencode-pty-bench\njust bench QUICK=1    # a smoke run of under a minute into a temporary \
         directory\n```\n\nThe full run rewrites `bench/results.json`, this file and `bench/charts/*.svg`; a quiet \
         machine gives steadier figures (these are shared machines: compare ratios, not absolute figures). \
         `--daemon PATH` measures another daemon binary; `--case NAME` runs one case (into a temporary directory); \
         `opencode-pty-bench report` renders this file and the charts again from `bench/results.json`.\n"
    );
    if let Some(before) = before {
        before_and_after(&mut out, before, results);
    }
    let _ = writeln!(out, "## Charts\n");
    for (title, path) in charts {
        let _ = writeln!(out, "![{title}]({path})\n");
    }
    for table in &results.tables {
        let _ = writeln!(out, "## {}\n\n{}\n", table.title, table.method);
        let _ = writeln!(out, "| figure | median | min | max | p99 | n | vs |\n|---|---:|---:|---:|---:|---:|---|");
        for row in &table.rows {
            let cells = match row.summary {
                Some(s) => {
                    let p99 = if row.unit == Unit::Milliseconds { number(s.p99) } else { "–".to_owned() };
                    let vs = ratios(row);
                    [with_unit(s.median, row.unit), number(s.min), number(s.max), p99, s.n.to_string(), cell(&vs)]
                }
                None => ["–".into(), "–".into(), "–".into(), "–".into(), "0".into(), String::new()],
            };
            let label = match &row.note {
                Some(note) => format!("{} ({note})", row.label),
                None => row.label.clone(),
            };
            let _ = writeln!(out, "| {} | {} |", cell(&label), cells.join(" | "));
        }
        let _ = writeln!(out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results with one table whose row `daemon` has `median` MB/s against a baseline of 100.
    fn results(median: f64) -> Results {
        let mut table = Table::new("ingest", "Ingest", "method");
        let base = table.add(Row::new("base", "baseline", Unit::MegabytesPerSecond));
        let ours = table.add(Row::new("daemon", "daemon", Unit::MegabytesPerSecond).vs(&["base"]));
        table.push_sample(base, 100.0);
        table.push_sample(ours, median);
        Results {
            date: "today".into(),
            seconds: 1.0,
            daemon: "opencode-pty".into(),
            machine: Machine::default(),
            plan: Plan::quick(),
            tables: vec![table.finish()],
        }
    }

    #[test]
    fn an_earlier_run_is_shown_beside_this_one_with_both_ratios() {
        let before = Before { what: "main at abc".into(), results: results(50.0) };
        let text = markdown(&results(90.0), "results.json", &[], Some(&before));
        assert!(text.contains("## Before and after"), "{text}");
        assert!(text.contains("main at abc"));
        assert!(
            text.contains("| ingest | daemon | 50.0 MB/s | 90.0 MB/s | 0.500x baseline | 0.900x baseline |"),
            "{text}"
        );
        assert!(!markdown(&results(90.0), "results.json", &[], None).contains("Before and after"));
        assert_eq!(cell("`a | b`"), "`a \\| b`");
    }

    #[test]
    fn numbers_keep_about_three_digits() {
        assert_eq!(number(1234.5), "1234");
        assert_eq!(number(26.24), "26.2");
        assert_eq!(number(1.384), "1.38");
        assert_eq!(number(0.1234), "0.123");
        assert_eq!(number(0.001_234), "0.0012");
    }
}
