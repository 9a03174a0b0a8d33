//! A digest of the report index, kept beside it so the viewer's index page
//! costs what the index gained since the last report, not the whole index.
//!
//! `index.jsonl` only grows: every run appends a line, and the viewer shows
//! each report's latest. Reading and parsing the whole file after every
//! report made a long-lived report directory (a developer's target, a few
//! thousand runs) cost seconds per run. The digest remembers, for each
//! report file, the latest line read, and how far the index was read. It
//! is a cache and nothing more: the index stays the record, a digest that
//! does not fit the index (gone, corrupt, another index's) is rebuilt from
//! the start, and two writers racing each leave a whole one (the one that
//! read less only makes the next reader read a little more).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// The digest's file name in the report directory (hidden: not a report).
pub(super) const DIGEST_FILE: &str = ".index-digest.json";

/// How many leading bytes of the index name it: a digest of another index
/// (the directory emptied and filled again) does not match.
const HEAD: usize = 256;

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Digest {
    /// Digest of the index's first bytes.
    head: String,
    /// Bytes of the index read so far (always at a line boundary).
    offset: usize,
    /// Per report file, the latest index line naming it.
    latest: BTreeMap<String, String>,
}

fn head_of(index: &str) -> String {
    let end = index.len().min(HEAD);
    crate::redact::short_digest(&index.as_bytes()[..end])
}

fn read(dir: &Path, index: &str) -> Digest {
    let fits = |d: &Digest| {
        d.offset <= index.len()
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
    .unwrap_or_default()
}

/// The latest index line of every report, parsed: the digest brought up to
/// date with what `index` (the whole index, as just read) gained, and
/// written back when it moved. A last line still being written is read but
/// not remembered.
pub(super) fn latest_lines(dir: &Path, index: &str) -> Vec<Value> {
    let mut digest = read(dir, index);
    let unread = &index[digest.offset..];
    let complete = unread.rfind('\n').map_or(0, |at| at + 1);
    let remember = |latest: &mut BTreeMap<String, String>, line: &str| {
        let report = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|value| value.get("report")?.as_str().map(str::to_owned));
        if let Some(report) = report {
            latest.insert(report, line.to_owned());
        }
    };
    for line in unread[..complete].lines() {
        remember(&mut digest.latest, line);
    }
    if complete > 0 {
        digest.offset += complete;
        digest.head = head_of(index);
        if let Ok(bytes) = serde_json::to_vec(&digest) {
            // A digest not written costs the next reader time, never a run.
            let _ = super::viewer::write_atomic(&dir.join(DIGEST_FILE), &bytes);
        }
    }
    let mut latest = digest.latest;
    remember(&mut latest, &unread[complete..]);
    latest
        .values()
        .filter_map(|line| serde_json::from_str(line).ok())
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
            .map(|v| {
                (
                    v["report"].as_str().unwrap().to_owned(),
                    v["verdict"].as_str().unwrap().to_owned(),
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
