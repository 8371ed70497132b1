//! The report's SVG charts, drawn by hand (no crate): grouped bars per category with dashed reference lines
//! for the limits, and the charts built from a run's results: throughput against observers and against
//! terminals, ours against tmux and the limits (issue 14), and memory against terminals (issue 31).

use std::fmt::Write as _;

use crate::report::{Results, number};

/// One bar per category.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    /// The legend's name.
    pub name: String,
    /// One value per category (`None`: no bar).
    pub values: Vec<Option<f64>>,
}

/// A dashed horizontal line across the plot.
#[derive(Debug, Clone)]
pub(crate) struct Limit {
    /// The legend's name.
    pub name: String,
    /// Its height.
    pub value: f64,
}

/// Bar colours, then line colours.
const BARS: [&str; 5] = ["#2f6fb0", "#d9822b", "#5a9e4b", "#8e5ea2", "#b8a03a"];
const LINES: [&str; 4] = ["#c23b22", "#555555", "#0f8c8c", "#a0a000"];

/// The chart's width.
const W: f64 = 760.0;
/// The chart's height.
const H: f64 = 420.0;
/// The plot's left margin (the y axis labels).
const LEFT: f64 = 70.0;
/// The plot's right margin.
const RIGHT: f64 = 20.0;
/// The plot's top margin (the title).
const TOP: f64 = 44.0;
/// The plot's bottom margin (the x axis labels and the legend).
const BOTTOM: f64 = 110.0;

/// Escapes text for SVG.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A round step for about five ticks up to `max`.
fn tick_step(max: f64) -> f64 {
    let raw = (max / 5.0).max(1e-9);
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * power).find(|step| *step >= raw).unwrap_or(10.0 * power)
}

/// A grouped bar chart of `series` over `categories` with `limits`, as an SVG document.
pub(crate) fn bar_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    categories: &[String],
    series: &[Series],
    limits: &[Limit],
) -> String {
    let values = series.iter().flat_map(|s| s.values.iter().flatten().copied()).chain(limits.iter().map(|l| l.value));
    let max = values.fold(0.0, f64::max).max(1e-9) * 1.12;
    let step = tick_step(max);
    let top = (max / step).ceil() * step;
    let (plot_w, plot_h) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let y = |v: f64| TOP + plot_h * (1.0 - v / top);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ =
        writeln!(svg, r#"<text x="{}" y="24" font-size="16" text-anchor="middle">{}</text>"#, W / 2.0, escape(title));
    let mut tick = 0.0;
    while tick <= top + step / 2.0 {
        let ty = y(tick);
        let _ = writeln!(svg, r##"<line x1="{LEFT}" y1="{ty:.1}" x2="{}" y2="{ty:.1}" stroke="#e4e4e4"/>"##, W - RIGHT);
        let label = if tick.fract() == 0.0 { format!("{tick:.0}") } else { number(tick) };
        let _ = writeln!(svg, r#"<text x="{}" y="{:.1}" text-anchor="end">{label}</text>"#, LEFT - 6.0, ty + 4.0);
        tick += step;
    }
    let _ = writeln!(
        svg,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + plot_h / 2.0,
        escape(y_label)
    );
    let group = plot_w / categories.len().max(1) as f64;
    let bar = group * 0.75 / series.len().max(1) as f64;
    for (c, category) in categories.iter().enumerate() {
        let x0 = LEFT + group * c as f64 + group * 0.125;
        for (s, one) in series.iter().enumerate() {
            let Some(Some(value)) = one.values.get(c) else { continue };
            let (bx, by) = (x0 + bar * s as f64, y(*value));
            let colour = BARS[s % BARS.len()];
            let _ = writeln!(
                svg,
                r#"<rect x="{bx:.1}" y="{by:.1}" width="{:.1}" height="{:.1}" fill="{colour}"/>"#,
                bar * 0.92,
                TOP + plot_h - by
            );
            let _ = writeln!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#,
                bx + bar * 0.46,
                by - 3.0,
                number(*value)
            );
        }
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + group * (c as f64 + 0.5),
            TOP + plot_h + 16.0,
            escape(category)
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        TOP + plot_h + 34.0,
        escape(x_label)
    );
    for (l, limit) in limits.iter().enumerate() {
        let (ly, colour) = (y(limit.value), LINES[l % LINES.len()]);
        let _ = writeln!(
            svg,
            r#"<line x1="{LEFT}" y1="{ly:.1}" x2="{}" y2="{ly:.1}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="6 4"/>"#,
            W - RIGHT
        );
    }
    let _ = writeln!(svg, r#"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{}" stroke="black"/>"#, TOP + plot_h);
    let _ = writeln!(svg, r#"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="black"/>"#, TOP + plot_h, W - RIGHT);
    let legend: Vec<(String, &str, bool)> = series
        .iter()
        .enumerate()
        .map(|(s, one)| (one.name.clone(), BARS[s % BARS.len()], false))
        .chain(
            limits
                .iter()
                .enumerate()
                .map(|(l, limit)| (format!("{} ({})", limit.name, number(limit.value)), LINES[l % LINES.len()], true)),
        )
        .collect();
    for (i, (name, colour, dashed)) in legend.iter().enumerate() {
        let (lx, ly) = (LEFT + 250.0 * (i % 3) as f64, H - 50.0 + 18.0 * (i / 3) as f64);
        if *dashed {
            let _ = writeln!(
                svg,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="6 4"/>"#,
                lx + 18.0
            );
        } else {
            let _ = writeln!(svg, r#"<rect x="{lx}" y="{}" width="18" height="10" fill="{colour}"/>"#, ly - 5.0);
        }
        let _ = writeln!(svg, r#"<text x="{}" y="{}">{}</text>"#, lx + 24.0, ly + 4.0, escape(name));
    }
    svg.push_str("</svg>\n");
    svg
}

/// The median of row `key` in table `case`.
fn median(results: &Results, case: &str, key: &str) -> Option<f64> {
    results.table(case)?.row(key)?.median()
}

/// The limits every throughput chart shows: the parser alone, times `times`, and the raw PTY.
fn limits(results: &Results, times: f64, parser: &str) -> Vec<Limit> {
    let mut limits = Vec::new();
    if let Some(value) = median(results, "ingest", "vt_parse") {
        limits.push(Limit { name: parser.to_owned(), value: value * times });
    }
    if let Some(value) = median(results, "ingest", "raw_pty") {
        limits.push(Limit { name: "raw PTY drain".to_owned(), value });
    }
    limits
}

/// Throughput against the number of observers: ours and the ceiling of every CPU busy at each run's CPU cost,
/// with tmux and the limits as lines.
pub(crate) fn observers(results: &Results) -> String {
    let counts = &results.plan.observers;
    let categories: Vec<String> = counts.iter().map(ToString::to_string).collect();
    let series =
        [("daemon", "daemon, one terminal"), ("ceiling", "ceiling: every CPU busy at that cost")].map(|(key, name)| {
            Series {
                name: name.to_owned(),
                values: counts.iter().map(|n| median(results, "fanout", &format!("{key}_{n}"))).collect(),
            }
        });
    let mut limits = limits(results, 1.0, "libghostty-vt alone");
    if let Some(value) = median(results, "ingest", "tmux") {
        limits.push(Limit { name: "tmux, one session".to_owned(), value });
    }
    bar_chart("Throughput against observers", "observers of one 80x24 terminal", "MB/s", &categories, &series, &limits)
}

/// Aggregate throughput against the number of terminals: ours and tmux, with the limits as lines.
pub(crate) fn terminals(results: &Results) -> String {
    let counts = &results.plan.scale_terminals;
    let categories: Vec<String> = counts.iter().map(ToString::to_string).collect();
    let series = ["daemon", "tmux"].map(|who| Series {
        name: format!("{who}, aggregate"),
        values: counts.iter().map(|n| median(results, "scale", &format!("{who}_{n}"))).collect(),
    });
    let cores = results.machine.cores as f64;
    let limits = limits(results, cores, &format!("libghostty-vt alone x {cores} cores"));
    bar_chart(
        "Aggregate throughput against terminals",
        "terminals printing at once",
        "MB/s",
        &categories,
        &series,
        &limits,
    )
}

/// The server's RSS against the number of terminals: ours idle, full, and full then quiet, and tmux idle and
/// full (tmux keeps the same memory quiet or not).
pub(crate) fn memory(results: &Results) -> String {
    let counts = &results.plan.memory_terminals;
    let categories: Vec<String> = counts.iter().map(ToString::to_string).collect();
    let series = [
        ("daemon_idle", "daemon, idle sh"),
        ("daemon_full", "daemon, full"),
        ("daemon_quiet", "daemon, full then quiet"),
        ("tmux_idle", "tmux, idle sh"),
        ("tmux_full", "tmux, full"),
    ]
    .map(|(key, name)| Series {
        name: name.to_owned(),
        values: counts.iter().map(|n| median(results, "memory_terminals", &format!("{key}_{n}"))).collect(),
    });
    let x_label =
        format!("terminals (80x24; full: each printed {} of log text)", crate::data::human(results.plan.scale_bytes));
    bar_chart("Server memory against terminals", &x_label, "RSS, MiB", &categories, &series, &[])
}
