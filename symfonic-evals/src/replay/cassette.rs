//! Cassettes: recorded model exchanges, one JSON object per line, kept in
//! the adopter's crate and reviewed in version control.
//!
//! A line is one exchange: the scope it was recorded in (scenario and
//! trial), its ordinal among identical requests in that trial, the canonical
//! request (method, path, JSON body) and the response (status, content type,
//! and a JSON `body`, a non-JSON `text`, or the server-sent `events` of a
//! stream, each event as one string without its blank-line terminator).
//!
//! Loading is strict: a line that is not such an exchange, or that repeats
//! another's key, is a [`ReplayError::CassetteMalformed`] naming the file
//! and line, and nothing is replayed from that cassette.

use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::canonical::{volatile_paths, CanonicalRequest};
use super::config::pending_path;
use super::error::{MissReason, Nearest, ReplayError};
use super::nearest::{self, nearest, Recordings, Sketch, Summary};
use super::safe_write;
use super::scrub::Scrubber;
use crate::bounded_read::{self, ReadRefusal};

/// How many differing paths a miss lists before it says "and N more".
const LISTED_DIFFERENCES: usize = 8;

/// One recorded exchange, as a cassette line holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exchange {
    /// The scenario it was recorded in.
    pub scenario: String,
    /// The trial (zero-based).
    pub trial: u32,
    /// Its position among identical requests in that trial (zero-based).
    pub ordinal: u32,
    /// The canonical request.
    pub request: RecordedRequest,
    /// The upstream's answer.
    pub response: RecordedResponse,
    /// In a pending file only: the recording mode (`all` replaces the
    /// scope's exchanges on acceptance, `missing` adds to them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded: Option<String>,
}

/// A request as recorded: canonical, volatile fields removed, scrubbed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedRequest {
    /// `POST`.
    pub method: String,
    /// `/v1/chat/completions` and the like.
    pub path: String,
    /// The canonical JSON body.
    pub body: Value,
}

/// A response as recorded. Exactly one of `body`, `text` and `events` is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedResponse {
    /// The HTTP status.
    pub status: u16,
    /// The content type.
    pub content_type: String,
    /// A JSON body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// A body that is not JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A server-sent event stream, one event per entry, replayed one chunk
    /// per event in this order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<String>>,
}

impl RecordedResponse {
    fn check(&self) -> Result<(), String> {
        let set = [
            self.body.is_some(),
            self.text.is_some(),
            self.events.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count();
        if set != 1 {
            return Err(format!(
                "the response must have exactly one of `body`, `text` and `events` (it has {set})"
            ));
        }
        if !(100..=599).contains(&self.status) {
            return Err(format!("status {} is not an HTTP status", self.status));
        }
        Ok(())
    }
}

/// The lookup key of an exchange within a cassette.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    scenario: String,
    trial: u32,
    request: String,
    ordinal: u32,
}

#[derive(Debug, Clone)]
struct Entry {
    exchange: Exchange,
    line: usize,
    key: Key,
}

/// A loaded cassette, indexed for replay.
#[derive(Debug, Clone, Default)]
pub struct Cassette {
    path: PathBuf,
    entries: Vec<Entry>,
    index: HashMap<Key, usize>,
    /// How many times each request was recorded per (scenario, trial).
    occurrences: HashMap<(String, u32, String), u32>,
    /// How many trials of each scenario are recorded (highest index + 1).
    trials: HashMap<String, u32>,
    /// Each entry's summary for the miss search, built on the first miss
    /// (misses are rare, and a cassette that never misses never pays).
    summaries: OnceLock<Vec<Summary>>,
}

/// What a lookup found.
#[derive(Debug)]
pub(crate) enum Lookup<'a> {
    Hit(&'a Exchange),
    Miss(MissReason),
}

impl Cassette {
    /// Loads the cassette at `path`, keying each request with
    /// `volatile_fields` ignored. A file that does not exist is an empty
    /// cassette (every request misses, saying nothing is recorded).
    ///
    /// # Errors
    ///
    /// `CassetteUnreadable` when the file cannot be read, when it is not a
    /// regular file once links are followed (a link to `/dev/zero`, a
    /// FIFO, a directory: the error says which), or when it is larger than
    /// [`max_file_bytes`](crate::bounded_read::max_file_bytes);
    /// `CassetteMalformed` with the one-based line of the first line that is
    /// not valid UTF-8 JSON of an exchange, or that repeats an earlier key.
    pub fn load(path: &Path, volatile_fields: &[String]) -> Result<Self, ReplayError> {
        let bytes = match bounded_read::read_regular(path, bounded_read::max_file_bytes()) {
            Ok(bytes) => bytes,
            Err(ReadRefusal::NotFound { .. }) => {
                return Ok(Self {
                    path: path.to_owned(),
                    ..Self::default()
                })
            }
            Err(refusal) => {
                return Err(ReplayError::CassetteUnreadable {
                    path: path.to_owned(),
                    reason: refusal.reason(),
                })
            }
        };
        let volatile = volatile_paths(volatile_fields);
        let scrubber = Scrubber::default();
        let mut cassette = Self {
            path: path.to_owned(),
            ..Self::default()
        };
        for (n, raw) in bytes.split(|b| *b == b'\n').enumerate() {
            let line = n + 1;
            let malformed = |reason: String| ReplayError::CassetteMalformed {
                path: path.to_owned(),
                line,
                reason,
            };
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let text = std::str::from_utf8(raw)
                .map_err(|e| malformed(format!("not UTF-8 (byte {})", e.valid_up_to())))?;
            let exchange: Exchange = serde_json::from_str(text)
                .map_err(|e| malformed(format!("not an exchange: {}", describe_json_error(&e))))?;
            exchange.response.check().map_err(malformed)?;
            let canonical = CanonicalRequest::new(
                &exchange.request.method,
                &exchange.request.path,
                exchange.request.body.clone(),
                &volatile,
                &scrubber,
            );
            let key = Key {
                scenario: exchange.scenario.clone(),
                trial: exchange.trial,
                request: canonical.key,
                ordinal: exchange.ordinal,
            };
            if let Some(&earlier) = cassette.index.get(&key) {
                return Err(malformed(format!(
                    "repeats the exchange of line {} (same scenario, trial, request and ordinal)",
                    cassette.entries[earlier].line
                )));
            }
            cassette.insert(exchange, line, key);
        }
        Ok(cassette)
    }

    fn insert(&mut self, exchange: Exchange, line: usize, key: Key) {
        let scope = (key.scenario.clone(), key.trial, key.request.clone());
        let count = self.occurrences.entry(scope).or_insert(0);
        *count = (*count).max(key.ordinal + 1);
        let trials = self.trials.entry(key.scenario.clone()).or_insert(0);
        *trials = (*trials).max(key.trial + 1);
        self.index.insert(key.clone(), self.entries.len());
        self.entries.push(Entry {
            exchange,
            line,
            key,
        });
    }

    /// The file this cassette was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many exchanges it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every exchange, in file order.
    pub fn exchanges(&self) -> impl Iterator<Item = &Exchange> {
        self.entries.iter().map(|e| &e.exchange)
    }

    /// How many trials of `scenario` it holds.
    pub fn recorded_trials(&self, scenario: &str) -> u32 {
        self.trials.get(scenario).copied().unwrap_or(0)
    }

    pub(crate) fn get(
        &self,
        scenario: &str,
        trial: u32,
        request: &CanonicalRequest,
        ordinal: u32,
    ) -> Option<&Exchange> {
        let key = Key {
            scenario: scenario.to_owned(),
            trial,
            request: request.key.clone(),
            ordinal,
        };
        self.index.get(&key).map(|&i| &self.entries[i].exchange)
    }

    /// The exchange answering `request`, or why there is none. `gone` says
    /// whether the client went away, so a miss's search can stop early.
    pub(crate) fn lookup(
        &self,
        scenario: &str,
        trial: u32,
        request: &CanonicalRequest,
        ordinal: u32,
        gone: &dyn Fn() -> bool,
    ) -> Lookup<'_> {
        if let Some(exchange) = self.get(scenario, trial, request, ordinal) {
            return Lookup::Hit(exchange);
        }
        let scope = (scenario.to_owned(), trial, request.key.clone());
        if let Some(&recorded) = self.occurrences.get(&scope) {
            return Lookup::Miss(MissReason::MoreOccurrences { recorded });
        }
        let recorded_trials = self.recorded_trials(scenario);
        if recorded_trials > 0 && trial >= recorded_trials {
            return Lookup::Miss(MissReason::TrialNotRecorded { recorded_trials });
        }
        Lookup::Miss(MissReason::NotRecorded {
            nearest: self.nearest(scenario, trial, request, gone),
        })
    }

    /// The recorded request with the same method and path closest to
    /// `request`, preferring the same scenario and trial; bounded work
    /// whatever the sizes (see [`nearest`]).
    fn nearest(
        &self,
        scenario: &str,
        trial: u32,
        canonical: &CanonicalRequest,
        gone: &dyn Fn() -> bool,
    ) -> Option<Nearest> {
        let summaries = self.summaries.get_or_init(|| {
            self.entries
                .iter()
                .map(|e| Summary {
                    route: nearest::route(&e.exchange.request.method, &e.exchange.request.path),
                    scope: nearest::scope(&e.key.scenario, e.key.trial),
                    line: e.line,
                    sketch: Sketch::of(&e.exchange.request.body),
                })
                .collect()
        });
        let body = |index: usize| {
            let request = &self.entries.get(index)?.exchange.request;
            (request.method == canonical.method && request.path == canonical.path)
                .then_some(&request.body)
        };
        let recordings = Recordings {
            summaries,
            body: &body,
        };
        let key = (
            nearest::route(&canonical.method, &canonical.path),
            nearest::scope(scenario, trial),
        );
        let (index, differences, more) =
            nearest(&recordings, key, &canonical.body, LISTED_DIFFERENCES, gone)?;
        let best = &self.entries[index];
        Some(Nearest {
            line: best.line,
            scenario: best.key.scenario.clone(),
            trial: best.key.trial,
            differences,
            more,
        })
    }
}

/// The field names an exchange line may hold: the only names a load error
/// shows as they are.
const EXCHANGE_FIELDS: &[&str] = &[
    "scenario",
    "trial",
    "ordinal",
    "request",
    "response",
    "recorded",
    "method",
    "path",
    "body",
    "status",
    "content_type",
    "text",
    "events",
];

/// Where serde stopped, without quoting the input: a name in backquotes
/// is shown only if it is one of the exchange's own fields (an unknown
/// field's name is the file's content and is digested), and a message
/// quoting a value keeps only its category and column.
fn describe_json_error(error: &serde_json::Error) -> String {
    let text = error.to_string();
    if text.contains('"') {
        return format!("{:?} error at column {}", error.classify(), error.column());
    }
    let mut out = String::with_capacity(text.len());
    let mut pieces = text.split('`');
    out.push_str(pieces.next().unwrap_or_default());
    let mut quoted = true;
    for piece in pieces {
        if quoted {
            if EXCHANGE_FIELDS.contains(&piece) {
                out.push('`');
                out.push_str(piece);
                out.push('`');
            } else {
                out.push_str(&crate::redact::short_digest(piece.as_bytes()));
            }
        } else {
            out.push_str(piece);
        }
        quoted = !quoted;
    }
    out
}

/// Appends recorded exchanges to a pending file, one line each, flushed as
/// they arrive so an interrupted run loses nothing it recorded. The first
/// write of a pack run replaces any pending file left by an earlier one.
#[derive(Debug)]
pub(crate) struct PendingWriter {
    path: PathBuf,
    file: Mutex<Option<File>>,
}

impl PendingWriter {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self {
            path,
            file: Mutex::new(None),
        }
    }

    pub(crate) fn append(&self, exchange: &Exchange) -> Result<(), ReplayError> {
        let unwritable = |e: std::io::Error| ReplayError::PendingUnwritable {
            path: self.path.clone(),
            reason: e.to_string(),
        };
        let mut line =
            serde_json::to_vec(exchange).map_err(|e| ReplayError::PendingUnwritable {
                path: self.path.clone(),
                reason: e.to_string(),
            })?;
        line.push(b'\n');
        let mut guard = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_none() {
            *guard = Some(safe_write::truncate_for_append(&self.path).map_err(unwritable)?);
        }
        let file = guard.as_mut().expect("opened above");
        file.write_all(&line)
            .and_then(|()| file.flush())
            .map_err(unwritable)
    }
}

/// What accepting a pending file did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Accepted {
    /// Exchanges added from the pending file.
    pub added: usize,
    /// Exchanges of the cassette dropped because a `record=all` run
    /// re-recorded their scope.
    pub replaced: usize,
    /// Exchanges of the cassette kept as they were.
    pub kept: usize,
}

/// Accepts the exchanges pending review for `cassette` (from
/// `<name>.pending.jsonl` beside it) into the cassette, then removes the
/// pending file. Exchanges recorded with `all` replace the cassette's
/// exchanges for the same scenario and trial; those recorded with `missing`
/// are added. The cassette is rewritten atomically, ordered by scenario and
/// trial (record order within a trial).
///
/// This is the review step: new recordings are never replayed until an
/// adopter has read the pending file (it is plain JSON lines, diffable in
/// version control) and accepted it.
///
/// # Errors
///
/// `CassetteMalformed` if either file has a bad line (nothing is changed),
/// `CassetteUnreadable` when there is no pending file, `PendingUnwritable`
/// when the cassette cannot be written.
pub fn accept_pending(
    cassette: &Path,
    volatile_fields: &[String],
) -> Result<Accepted, ReplayError> {
    let pending_file = pending_path(cassette);
    for path in [cassette, pending_file.as_path()] {
        safe_write::refuse_link(path).map_err(|e| ReplayError::PendingUnwritable {
            path: path.to_owned(),
            reason: e.to_string(),
        })?;
    }
    if !pending_file.exists() {
        return Err(ReplayError::CassetteUnreadable {
            path: pending_file,
            reason: "no pending exchanges to accept".into(),
        });
    }
    let pending = Cassette::load(&pending_file, volatile_fields)?;
    let current = Cassette::load(cassette, volatile_fields)?;
    let rerecorded: BTreeSet<(String, u32)> = pending
        .entries
        .iter()
        .filter(|e| e.exchange.recorded.as_deref() == Some("all"))
        .map(|e| (e.key.scenario.clone(), e.key.trial))
        .collect();
    let mut report = Accepted::default();
    let mut merged: Vec<(usize, Exchange)> = Vec::new();
    for entry in &current.entries {
        let scope = (entry.key.scenario.clone(), entry.key.trial);
        if rerecorded.contains(&scope) || pending.index.contains_key(&entry.key) {
            report.replaced += 1;
        } else {
            report.kept += 1;
            merged.push((merged.len(), entry.exchange.clone()));
        }
    }
    for entry in &pending.entries {
        let mut exchange = entry.exchange.clone();
        exchange.recorded = None;
        report.added += 1;
        merged.push((merged.len(), exchange));
    }
    merged.sort_by(|(i, a), (j, b)| {
        (a.scenario.as_str(), a.trial, i).cmp(&(b.scenario.as_str(), b.trial, j))
    });
    let mut text = Vec::new();
    for (_, exchange) in &merged {
        serde_json::to_writer(&mut text, exchange).map_err(|e| ReplayError::PendingUnwritable {
            path: cassette.to_owned(),
            reason: e.to_string(),
        })?;
        text.push(b'\n');
    }
    let unwritable = |e: std::io::Error| ReplayError::PendingUnwritable {
        path: cassette.to_owned(),
        reason: e.to_string(),
    };
    safe_write::replace_file(cassette, &text).map_err(unwritable)?;
    safe_write::remove_file(&pending_file).map_err(unwritable)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use serde_json::json;

    use crate::replay::ReplayMiss;

    use super::*;

    fn exchange(scenario: &str, trial: u32, ordinal: u32, content: &str) -> Exchange {
        Exchange {
            scenario: scenario.into(),
            trial,
            ordinal,
            request: RecordedRequest {
                method: "POST".into(),
                path: "/v1/chat/completions".into(),
                body: json!({"model": "m", "messages": [{"role": "user", "content": content}]}),
            },
            response: RecordedResponse {
                status: 200,
                content_type: "application/json".into(),
                body: Some(json!({"ok": content})),
                text: None,
                events: None,
            },
            recorded: None,
        }
    }

    fn write_lines(path: &Path, lines: &[String]) {
        fs::write(path, lines.join("\n") + "\n").unwrap();
    }

    fn line(e: &Exchange) -> String {
        serde_json::to_string(e).unwrap()
    }

    #[test]
    fn a_malformed_line_is_named_with_its_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let good = line(&exchange("s", 0, 0, "a"));
        for bad in [
            "{not json".to_owned(),
            r#"{"scenario":"s"}"#.to_owned(),
            good.replace("\"status\":200", "\"status\":9000"),
            good.replace("\"body\":{\"ok\"", "\"text\":\"x\",\"body\":{\"ok\""),
            good.replace("\"ordinal\":0", "\"ordinal\":0,\"extra\":1"),
            good.clone(),
        ] {
            write_lines(&path, &[good.clone(), String::new(), bad]);
            let err = Cassette::load(&path, &[]).unwrap_err();
            match &err {
                ReplayError::CassetteMalformed { path: p, line, .. } => {
                    assert_eq!((p.as_path(), *line), (path.as_path(), 3), "{err}");
                }
                other => panic!("expected CassetteMalformed, got {other}"),
            }
            assert!(err.to_string().starts_with("CassetteMalformed: "));
            assert!(err.to_string().contains("c.jsonl:3:"));
        }
    }

    #[test]
    fn a_missing_file_is_an_empty_cassette() {
        let c = Cassette::load(Path::new("/nonexistent/dir/c.jsonl"), &[]).unwrap();
        assert!(c.is_empty());
    }

    #[test]
    fn lookups_key_on_scope_request_and_ordinal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        write_lines(
            &path,
            &[
                line(&exchange("s", 0, 0, "a")),
                line(&exchange("s", 0, 1, "a")),
                line(&exchange("s", 1, 0, "a")),
            ],
        );
        let c = Cassette::load(&path, &[]).unwrap();
        let req = |content: &str| {
            let e = exchange("s", 0, 0, content);
            CanonicalRequest::new(
                "POST",
                &e.request.path,
                e.request.body,
                &[],
                &Scrubber::default(),
            )
        };
        assert!(matches!(
            c.lookup("s", 0, &req("a"), 1, &|| false),
            Lookup::Hit(_)
        ));
        assert!(matches!(
            c.lookup("s", 0, &req("a"), 2, &|| false),
            Lookup::Miss(MissReason::MoreOccurrences { recorded: 2 })
        ));
        assert!(matches!(
            c.lookup("s", 2, &req("a"), 0, &|| false),
            Lookup::Miss(MissReason::TrialNotRecorded { recorded_trials: 2 })
        ));
        let Lookup::Miss(MissReason::NotRecorded { nearest: Some(n) }) =
            c.lookup("s", 0, &req("b"), 0, &|| false)
        else {
            panic!("expected a miss with a nearest request");
        };
        assert_eq!(n.line, 1);
        assert_eq!(n.differences[0].path, "$.messages[0].content");
        let Lookup::Miss(reason) = c.lookup("other", 0, &req("a"), 0, &|| false) else {
            panic!("another scenario's request does not replay here");
        };
        let MissReason::NotRecorded { nearest: Some(n) } = &reason else {
            panic!("expected a nearest request, got {reason:?}");
        };
        assert!(n.differences.is_empty());
        // The same body under another scope: the message says so instead
        // of listing no differing paths.
        let miss = ReplayMiss {
            step: None,
            scenario: "other".into(),
            trial: 0,
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            digest: "d".into(),
            ordinal: 0,
            cassette: path.clone(),
            reason,
        };
        let text = miss.to_string();
        assert!(
            text.contains("the same request is recorded at line 1 under scenario `s`, trial 0"),
            "{text}"
        );
        assert!(!text.contains("differing paths"), "{text}");
    }

    #[test]
    fn accepting_adds_missing_and_replaces_rerecorded_scopes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        write_lines(
            &path,
            &[
                line(&exchange("s", 0, 0, "old0")),
                line(&exchange("s", 1, 0, "old1")),
            ],
        );
        let mut fresh = exchange("s", 0, 0, "new0");
        fresh.recorded = Some("all".into());
        let mut added = exchange("s", 1, 0, "more1");
        added.recorded = Some("missing".into());
        write_lines(&pending_path(&path), &[line(&fresh), line(&added)]);
        let report = accept_pending(&path, &[]).unwrap();
        assert_eq!(
            report,
            Accepted {
                added: 2,
                replaced: 1,
                kept: 1
            }
        );
        assert!(!pending_path(&path).exists());
        let c = Cassette::load(&path, &[]).unwrap();
        let contents: Vec<String> = c
            .exchanges()
            .map(|e| {
                e.request.body["messages"][0]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(contents, ["new0", "old1", "more1"]);
        assert!(c.exchanges().all(|e| e.recorded.is_none()));
        assert!(
            accept_pending(&path, &[]).is_err(),
            "nothing left to accept"
        );
    }

    #[test]
    fn pending_writer_replaces_an_earlier_pending_file_then_appends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("c.pending.jsonl");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "stale\n").unwrap();
        let w = PendingWriter::new(path.clone());
        w.append(&exchange("s", 0, 0, "a")).unwrap();
        w.append(&exchange("s", 0, 1, "a")).unwrap();
        let c = Cassette::load(&path, &[]).unwrap();
        assert_eq!(c.len(), 2);
    }
}
