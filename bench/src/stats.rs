//! What a case measures and how it is summarised: a `Row` of samples (median, min, max, p99) with the keys of
//! the baselines it is compared against, a `Table` per case, and the ratios, always taken between medians of the
//! same run. This is also the shape of `results.json`.

use serde::{Deserialize, Serialize};

/// The unit of a row's samples, which also says whether more is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Unit {
    /// Megabytes (10^6 bytes) per second.
    #[serde(rename = "MB/s")]
    MegabytesPerSecond,
    /// Milliseconds.
    #[serde(rename = "ms")]
    Milliseconds,
    /// Microseconds.
    #[serde(rename = "us")]
    Microseconds,
    /// Kibibytes.
    #[serde(rename = "KiB")]
    Kibibytes,
    /// Mebibytes.
    #[serde(rename = "MiB")]
    Mebibytes,
    /// A count (threads).
    #[serde(rename = "count")]
    Count,
    /// Milliseconds of CPU per megabyte moved.
    #[serde(rename = "ms/MB")]
    CpuMillisecondsPerMegabyte,
    /// CPUs busy on average.
    #[serde(rename = "CPUs")]
    Cpus,
    /// A dimensionless ratio measured within one repetition (slowest / mean).
    #[serde(rename = "ratio")]
    Ratio,
}

impl Unit {
    /// The unit as printed.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Unit::MegabytesPerSecond => "MB/s",
            Unit::Milliseconds => "ms",
            Unit::Microseconds => "µs",
            Unit::Kibibytes => "KiB",
            Unit::Mebibytes => "MiB",
            Unit::Count => "",
            Unit::CpuMillisecondsPerMegabyte => "ms/MB",
            Unit::Cpus => "CPUs",
            Unit::Ratio => "x",
        }
    }
}

/// Median, extremes and tail of a row's samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Summary {
    /// The middle sample (the mean of the two middle ones for an even count).
    pub median: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
    /// The 99th percentile (nearest rank).
    pub p99: f64,
    /// How many samples.
    pub n: usize,
}

impl Summary {
    /// Summarises `samples`; `None` when there are none.
    pub(crate) fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
        // Nearest rank: the smallest sample with at least 99% of the samples at or below it.
        let rank = (n * 99).div_ceil(100).max(1);
        Some(Summary { median, min: sorted[0], max: sorted[n - 1], p99: sorted[rank - 1], n })
    }
}

/// This row's median over a baseline's median (above 1: more MB/s, or more time, than the baseline).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Ratio {
    /// The baseline row's key.
    pub vs: String,
    /// The baseline row's label, for the report.
    pub vs_label: String,
    /// The ratio of the medians.
    pub value: f64,
}

/// One figure of a case: its samples from every repetition, or why there are none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Row {
    /// A stable identifier within the case (`daemon_16_observers`), used by ratios and charts.
    pub key: String,
    /// What was measured, for people.
    pub label: String,
    /// The unit of the samples.
    pub unit: Unit,
    /// Every sample, in the order taken.
    pub samples: Vec<f64>,
    /// Their summary, `None` without samples.
    pub summary: Option<Summary>,
    /// Why the row has no samples or what to know about them ("tmux not installed").
    pub note: Option<String>,
    /// The keys of the rows this one is compared with.
    pub baselines: Vec<String>,
    /// The comparisons, filled in by [`Table::finish`].
    pub ratios: Vec<Ratio>,
}

impl Row {
    /// A row without samples yet.
    pub(crate) fn new(key: impl Into<String>, label: impl Into<String>, unit: Unit) -> Row {
        Row {
            key: key.into(),
            label: label.into(),
            unit,
            samples: Vec::new(),
            summary: None,
            note: None,
            baselines: Vec::new(),
            ratios: Vec::new(),
        }
    }

    /// The same row compared against the rows with these keys.
    pub(crate) fn vs(mut self, baselines: &[&str]) -> Row {
        self.baselines = baselines.iter().map(|key| (*key).to_owned()).collect();
        self
    }

    /// The median, if there are samples.
    pub(crate) fn median(&self) -> Option<f64> {
        self.summary.map(|summary| summary.median)
    }
}

/// The rows of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Table {
    /// The case's identifier (`ingest`, `fanout`, ...).
    pub case: String,
    /// Its heading in the report.
    pub title: String,
    /// How it was measured, one paragraph for the report.
    pub method: String,
    /// Its figures.
    pub rows: Vec<Row>,
}

impl Table {
    /// An empty table.
    pub(crate) fn new(case: &str, title: &str, method: impl Into<String>) -> Table {
        Table { case: case.to_owned(), title: title.to_owned(), method: method.into(), rows: Vec::new() }
    }

    /// Adds a row and returns its index, for [`Table::push_sample`].
    pub(crate) fn add(&mut self, row: Row) -> usize {
        self.rows.push(row);
        self.rows.len() - 1
    }

    /// Records one sample of row `index`.
    pub(crate) fn push_sample(&mut self, index: usize, sample: f64) {
        self.rows[index].samples.push(sample);
    }

    /// Notes why row `index` has no (or fewer) samples; the first note is kept.
    pub(crate) fn note(&mut self, index: usize, note: impl Into<String>) {
        self.rows[index].note.get_or_insert_with(|| note.into());
    }

    /// The row with `key`.
    pub(crate) fn row(&self, key: &str) -> Option<&Row> {
        self.rows.iter().find(|row| row.key == key)
    }

    /// Summarises every row and computes the ratios against baselines of this table that have samples.
    pub(crate) fn finish(mut self) -> Table {
        for row in &mut self.rows {
            row.summary = Summary::of(&row.samples);
        }
        let medians: Vec<(String, String, Option<f64>)> =
            self.rows.iter().map(|row| (row.key.clone(), row.label.clone(), row.median())).collect();
        for row in &mut self.rows {
            let Some(median) = row.median() else { continue };
            row.ratios = row
                .baselines
                .iter()
                .filter_map(|key| medians.iter().find(|(k, _, _)| k == key))
                .filter_map(|(key, label, base)| {
                    base.filter(|base| *base > 0.0).map(|base| Ratio {
                        vs: key.clone(),
                        vs_label: short(label),
                        value: median / base,
                    })
                })
                .collect();
        }
        self
    }
}

/// A label without its parenthesis, for ratios: `libghostty-vt parse alone`.
fn short(label: &str) -> String {
    label.split(" (").next().unwrap_or(label).to_owned()
}

/// Megabytes per second for `bytes` in `seconds`.
pub(crate) fn mb_per_s(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / 1e6 / seconds.max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_and_ratios_use_medians_of_the_same_table() {
        let summary = Summary::of(&[3.0, 1.0, 2.0, 10.0]).expect("samples");
        assert_eq!((summary.median, summary.min, summary.max, summary.p99, summary.n), (2.5, 1.0, 10.0, 10.0, 4));
        assert_eq!(Summary::of(&[]), None);
        let mut table = Table::new("t", "T", "m");
        let base = table.add(Row::new("base", "Base", Unit::MegabytesPerSecond));
        let ours = table.add(Row::new("ours", "Ours", Unit::MegabytesPerSecond).vs(&["base", "missing"]));
        let none = table.add(Row::new("none", "None", Unit::MegabytesPerSecond).vs(&["base"]));
        table.note(none, "tmux not installed");
        for (b, o) in [(10.0, 5.0), (20.0, 10.0), (30.0, 15.0)] {
            table.push_sample(base, b);
            table.push_sample(ours, o);
        }
        let table = table.finish();
        let ours = table.row("ours").expect("row");
        assert_eq!(ours.ratios.len(), 1);
        assert!((ours.ratios[0].value - 0.5).abs() < 1e-9);
        assert!(table.row("none").expect("row").ratios.is_empty());
    }
}
