//! The main job's console: a progress line while the runs go, and the
//! summary table it ends with.
//!
//! On a terminal the progress is one line that rewrites itself (a bar, the
//! counts so far, the run that just ended); when stderr is not a terminal,
//! or under `CI=true`, each run that ends is a plain line of its own, so a
//! log reads top to bottom. A twin's failure reads `caught`, never
//! "failed": failing is what it is for.

use std::io::{IsTerminal as _, Write as _};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// What a run is, for the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A reference: must pass.
    Reference,
    /// A twin: must be caught.
    Twin,
    /// An honest variant's run of one pack: must pass.
    Honest,
}

/// Good of total, per kind.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// References passed, of those run.
    pub references: (usize, usize),
    /// Twins caught, of those run.
    pub twins: (usize, usize),
    /// Honest runs passed, of those run.
    pub honest: (usize, usize),
}

impl Counts {
    fn add(&mut self, kind: Kind, good: bool) {
        let slot = match kind {
            Kind::Reference => &mut self.references,
            Kind::Twin => &mut self.twins,
            Kind::Honest => &mut self.honest,
        };
        slot.0 += usize::from(good);
        slot.1 += 1;
    }
}

/// Whether progress rewrites one line: stderr is a terminal and this is
/// not CI.
pub fn rewrites_in_place() -> bool {
    std::io::stderr().is_terminal() && std::env::var("CI").map_or(true, |ci| ci != "true")
}

/// The progress of `total` runs, shared by the threads that run them.
pub struct Progress {
    total: usize,
    in_place: bool,
    started: Instant,
    state: Mutex<(usize, Counts)>,
}

/// Width of the bar, in cells.
const BAR: usize = 12;

impl Progress {
    /// Progress over `total` runs, rewriting one line when `in_place`.
    pub fn new(total: usize, in_place: bool) -> Self {
        Self {
            total,
            in_place,
            started: Instant::now(),
            state: Mutex::new((0, Counts::default())),
        }
    }

    /// Records a run that ended (`word` is what it came to: `passed`,
    /// `caught`, `ESCAPED`, ...) and shows it.
    pub fn ended(&self, label: &str, word: &str, kind: Kind, good: bool, took: Duration) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 += 1;
        state.1.add(kind, good);
        let (done, counts) = *state;
        let at = self.started.elapsed().as_secs_f64();
        let mut err = std::io::stderr().lock();
        let _ = if self.in_place {
            // One terminal row, or the next rewrite leaves the wrapped rest.
            let line = fit(
                &format!(
                    "{} {label} {word}",
                    progress_line(done, self.total, &counts, at)
                ),
                columns(),
            );
            write!(err, "\r\x1b[2K{line}")
        } else {
            writeln!(
                err,
                "[{done:>3}/{}] {label:<56} {word:<14} {:>5.1} s (at {at:.0} s)",
                self.total,
                took.as_secs_f64()
            )
        };
        let _ = err.flush();
    }

    /// Ends the progress line (on a terminal, clears it).
    pub fn finish(&self) {
        if self.in_place {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

/// The terminal's width: `COLUMNS` when the shell exports it, else 80.
fn columns() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|c| *c > 20)
        .unwrap_or(80)
}

/// `line` cut to less than `columns` characters.
fn fit(line: &str, columns: usize) -> String {
    line.chars().take(columns.saturating_sub(1)).collect()
}

/// The rewriting line: a bar, done of total, the counts so far, the time.
pub fn progress_line(done: usize, total: usize, counts: &Counts, secs: f64) -> String {
    let filled = (done * BAR).checked_div(total).unwrap_or(BAR).min(BAR);
    format!(
        "[{}{}] {done}/{total} refs {}/{}, twins caught {}/{}, honest {}/{}, {secs:.0}s:",
        "#".repeat(filled),
        "-".repeat(BAR - filled),
        counts.references.0,
        counts.references.1,
        counts.twins.0,
        counts.twins.1,
        counts.honest.0,
        counts.honest.1,
    )
}

/// The verdict line, as the overview words it.
pub fn verdict_line(
    references: (usize, usize),
    twins: (usize, usize),
    honest: (usize, usize),
) -> String {
    format!(
        "references {}/{} passed, twins {}/{} caught, honest variants {}/{} passed",
        references.0, references.1, twins.0, twins.1, honest.0, honest.1
    )
}

/// The summary table the main job ends with: the verdict line, then a row
/// per kind of deployment (good of total, and whether that is all) and the
/// wall time.
pub fn summary_table(
    references: (usize, usize),
    twins: (usize, usize),
    honest: (usize, usize),
    wall: Duration,
) -> String {
    let row = |what: &str, (good, total): (usize, usize)| {
        let mark = if good == total { "ok" } else { "NOT OK" };
        format!("| {what:<25} | {good:>5} | {total:>5} | {mark:<6} |\n")
    };
    let mut out = String::new();
    out.push_str(&verdict_line(references, twins, honest));
    out.push('\n');
    out.push_str(&format!(
        "| {:<25} |  good | total |        |\n",
        "deployments"
    ));
    out.push_str(&format!("|{}|-------|-------|--------|\n", "-".repeat(27)));
    out.push_str(&row("references passed", references));
    out.push_str(&row("twins caught where pinned", twins));
    out.push_str(&row("honest variants passed", honest));
    out.push_str(&format!(
        "| {:<25} | {:>11.1} s |        |\n",
        "wall time",
        wall.as_secs_f64()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_fills_its_bar_and_counts_by_kind() {
        let mut counts = Counts::default();
        counts.add(Kind::Reference, true);
        counts.add(Kind::Twin, true);
        counts.add(Kind::Twin, false);
        let line = progress_line(3, 6, &counts, 4.2);
        let half = BAR / 2;
        assert!(line.starts_with(&format!("[{}{}] 3/6", "#".repeat(half), "-".repeat(half))));
        assert!(line.contains("3/6 refs 1/1, twins caught 1/2, honest 0/0, 4s:"));
        assert_eq!(fit(&"x".repeat(100), 80).len(), 79);
        assert_eq!(fit("short", 80), "short");
        assert!(!line.to_lowercase().contains("failed"));
        assert!(progress_line(0, 0, &counts, 0.0).starts_with(&format!("[{}]", "#".repeat(BAR))));
    }

    #[test]
    fn the_summary_table_has_the_verdict_line_a_row_per_kind_and_the_wall_time() {
        let table = summary_table((8, 8), (116, 116), (12, 13), Duration::from_millis(41_250));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "references 8/8 passed, twins 116/116 caught, honest variants 12/13 passed"
        );
        assert!(lines[3].contains("references passed") && lines[3].ends_with("ok     |"));
        assert!(lines[4].contains("twins caught where pinned") && lines[4].contains("116 |   116"));
        assert!(lines[5].contains("NOT OK"));
        assert!(lines[6].contains("41.2 s") || lines[6].contains("41.3 s"));
        let width = lines[1].len();
        assert!(lines[1..].iter().all(|l| l.len() == width), "{table}");
        assert!(!table.to_lowercase().contains("failed"));
    }
}
