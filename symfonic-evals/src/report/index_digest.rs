//! A digest of the report index, kept beside it so the viewer's index page
//! costs what the index gained since the last report, not the whole index.
//!
//! `index.jsonl` only grows: every run appends a line, and the viewer shows
//! each report's latest. Reading and parsing the whole file after every
//! report made a long-lived report directory (a developer's target, a few
//! thousand runs) cost seconds per run. The digest remembers, for each
//! report file, the latest line read and its last few runs (the overview's
//! trend), and how far the index was read. It
//! is a cache and nothing more: the index stays the record, a digest that
//! does not fit the index (gone, corrupt, another index's) is rebuilt from
//! the start, and two writers racing each leave a whole one (the one that
//! read less only makes the next reader read a little more).

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::model::{IndexLine, ReportVerdict};

/// The digest's file name in the report directory (hidden: not a report).
pub(super) const DIGEST_FILE: &str = ".index-digest.json";

/// How many leading bytes of the index name it: a digest of another index
/// (the directory emptied and filled again) does not match.
const HEAD: usize = 256;

/// How many of a report's latest runs its trend keeps.
pub(crate) const HISTORY: usize = 20;

/// The digest's shape; a digest of another shape is rebuilt.
const SHAPE: u32 = 2;

/// One past run of a report, as its trend draws it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Point {
    /// When it started, in milliseconds since the Unix epoch.
    pub(crate) started_unix_ms: u64,
    /// Its verdict.
    pub(crate) verdict: ReportVerdict,
    /// Its wall time in microseconds.
    pub(crate) duration_us: u64,
    /// The scenarios that failed (what tells a caught twin from one caught
    /// elsewhere).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) failed_scenarios: Vec<String>,
}

impl Point {
    /// The point of one index line.
    pub(crate) fn of(line: &IndexLine) -> Self {
        Self {
            started_unix_ms: line.started_unix_ms,
            verdict: line.verdict,
            duration_us: line.duration_us,
            failed_scenarios: line.failed_scenarios.clone(),
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Digest {
    /// The digest's shape ([`SHAPE`]).
    #[serde(default)]
    shape: u32,
    /// Digest of the index's first bytes.
    head: String,
    /// Bytes of the index read so far (always at a line boundary).
    offset: usize,
    /// Per report file, the latest index line naming it.
    latest: BTreeMap<String, String>,
    /// Per report file, its latest runs, oldest first ([`HISTORY`] at most).
    #[serde(default)]
    history: BTreeMap<String, VecDeque<Point>>,
}

impl Digest {
    fn remember(&mut self, line: &str) {
        let Ok(parsed) = serde_json::from_str::<IndexLine>(line) else {
            return;
        };
        let Some(report) = parsed.report.clone() else {
            return;
        };
        let history = self.history.entry(report.clone()).or_default();
        history.push_back(Point::of(&parsed));
        while history.len() > HISTORY {
            history.pop_front();
        }
        self.latest.insert(report, line.to_owned());
    }
}

fn head_of(index: &str) -> String {
    let end = index.len().min(HEAD);
    crate::redact::short_digest(&index.as_bytes()[..end])
}

fn read(dir: &Path, index: &str) -> Digest {
    let fits = |d: &Digest| {
        d.shape == SHAPE
            && d.offset <= index.len()
            && (d.offset == 0 || index.as_bytes()[d.offset - 1] == b'\n')
            && (d.offset == 0 || d.head == head_of(index))
    };
    crate::bounded_read::read_regular(
        &dir.join(DIGEST_FILE),
        crate::bounded_read::max_file_bytes(),
    )
    .ok()
    .and_then(|bytes| serde_json::from_slice::<Digest>(&bytes).ok())
    .filter(fits)
    .unwrap_or_else(|| Digest {
        shape: SHAPE,
        ..Digest::default()
    })
}

/// A report's latest index line, and its latest runs for the trend (oldest
/// first, the latest included).
#[derive(Debug, Clone)]
pub(crate) struct Latest {
    /// The latest line.
    pub(crate) line: IndexLine,
    /// Its latest runs.
    pub(crate) history: Vec<Point>,
}

/// The latest index line of every report, parsed, with its history: the
/// digest brought up to date with what `index` (the whole index, as just
/// read) gained, and written back when it moved. A last line still being
/// written is read but not remembered.
pub(crate) fn latest_lines(dir: &Path, index: &str) -> Vec<Latest> {
    let mut digest = read(dir, index);
    let unread = &index[digest.offset..];
    let complete = unread.rfind('\n').map_or(0, |at| at + 1);
    for line in unread[..complete].lines() {
        digest.remember(line);
    }
    if complete > 0 {
        digest.offset += complete;
        digest.head = head_of(index);
        if let Ok(bytes) = serde_json::to_vec(&digest) {
            // A digest not written costs the next reader time, never a run.
            let _ = super::atomic::write_atomic(&dir.join(DIGEST_FILE), &bytes, false);
        }
    }
    digest.remember(&unread[complete..]);
    let mut history = digest.history;
    digest
        .latest
        .into_iter()
        .filter_map(|(report, line)| {
            Some(Latest {
                line: serde_json::from_str(&line).ok()?,
                history: history.remove(&report).map(Vec::from).unwrap_or_default(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn line(report: &str, verdict: &str) -> String {
        format!(
            "{}\n",
            serde_json::json!({"report": report, "verdict": verdict})
        )
    }

    fn verdicts(dir: &Path) -> Vec<(String, String)> {
        let index = std::fs::read_to_string(dir.join("index.jsonl")).unwrap_or_default();
        let mut seen: Vec<(String, String)> = latest_lines(dir, &index)
            .iter()
            .map(|l| {
                (
                    l.line.report.clone().unwrap(),
                    l.line.verdict.name().to_owned(),
                )
            })
            .collect();
        seen.sort();
        seen
    }

    fn append(dir: &Path, text: &str) {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("index.jsonl"))
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }

    #[test]
    fn the_digest_keeps_each_reports_latest_line_and_reads_only_what_is_new() {
        let dir = tempfile::tempdir().unwrap();
        append(
            dir.path(),
            &(line("a.json", "failed") + &line("b.json", "passed")),
        );
        assert_eq!(
            verdicts(dir.path()),
            [
                ("a.json".into(), "failed".into()),
                ("b.json".into(), "passed".into())
            ]
        );
        let digest: Digest =
            serde_json::from_slice(&std::fs::read(dir.path().join(DIGEST_FILE)).unwrap()).unwrap();
        let read_so_far = digest.offset;
        append(dir.path(), &line("a.json", "passed"));
        assert_eq!(verdicts(dir.path())[0], ("a.json".into(), "passed".into()));
        let digest: Digest =
            serde_json::from_slice(&std::fs::read(dir.path().join(DIGEST_FILE)).unwrap()).unwrap();
        assert!(digest.offset > read_so_far);
        // A half-written last line is read, not remembered.
        append(dir.path(), r#"{"report": "c.json", "verdict": "passed"}"#);
        assert_eq!(verdicts(dir.path()).len(), 3);
        let digest: Digest =
            serde_json::from_slice(&std::fs::read(dir.path().join(DIGEST_FILE)).unwrap()).unwrap();
        assert!(!digest.latest.contains_key("c.json"));
        // The trend: a's two runs, oldest first.
        let a = latest_lines(
            dir.path(),
            &std::fs::read_to_string(dir.path().join("index.jsonl")).unwrap(),
        )
        .into_iter()
        .find(|l| l.line.report.as_deref() == Some("a.json"))
        .unwrap();
        let verdicts: Vec<&str> = a.history.iter().map(|p| p.verdict.name()).collect();
        assert_eq!(verdicts, ["failed", "passed"]);
    }

    #[test]
    fn the_history_keeps_the_latest_runs_only() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..(HISTORY + 5) {
            let verdict = if i % 2 == 0 { "passed" } else { "failed" };
            append(dir.path(), &line("a.json", verdict));
        }
        let index = std::fs::read_to_string(dir.path().join("index.jsonl")).unwrap();
        let latest = latest_lines(dir.path(), &index);
        assert_eq!(latest[0].history.len(), HISTORY);
        // The last run appended (index HISTORY + 4, even) is the last point.
        assert_eq!(
            latest[0].history[HISTORY - 1].verdict,
            ReportVerdict::Passed
        );
        // Read again from the digest alone: the same trend.
        assert_eq!(
            latest_lines(dir.path(), &index)[0].history,
            latest[0].history
        );
    }

    #[test]
    fn a_digest_that_does_not_fit_the_index_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        append(
            dir.path(),
            &(line("a.json", "failed") + &line("b.json", "passed")),
        );
        verdicts(dir.path());
        // Another index in its place, shorter, then as long again.
        std::fs::write(dir.path().join("index.jsonl"), line("z.json", "passed")).unwrap();
        assert_eq!(verdicts(dir.path()), [("z.json".into(), "passed".into())]);
        std::fs::write(
            dir.path().join("index.jsonl"),
            line("y.json", "failed") + &line("x.json", "failed") + &line("w.json", "failed"),
        )
        .unwrap();
        assert_eq!(verdicts(dir.path()).len(), 3);
        // A corrupt digest is no digest.
        std::fs::write(dir.path().join(DIGEST_FILE), b"{not json").unwrap();
        assert_eq!(verdicts(dir.path()).len(), 3);
    }
}
