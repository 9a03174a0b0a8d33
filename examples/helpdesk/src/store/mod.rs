//! The help desk's embedded database: one SQLite file in the durable
//! directory, holding everything that must outlive the process.
//!
//! What lives here is exactly what a restart must not lose: the episodes the
//! consolidation cycle learns from, the procedures it promoted (drafts,
//! approved, rejected), the checkpoints of paused turns with their
//! single-use tokens and question ids ([`pauses`]), the business outbox the
//! tools write to and the counter call ids are drawn from ([`outbox`]).
//! Anything kept only in the `Helpdesk` value is gone after a restart, by
//! design.

pub mod outbox;
pub mod pauses;
pub mod runs;
pub mod support;

pub use outbox::effects_in_store;
pub use pauses::TokenRow;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use symfonic_evals::contracts::ProceduralDraft;

/// The file name of the database inside the durable directory.
pub const DATABASE_FILE: &str = "helpdesk.sqlite3";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS episodes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation TEXT NOT NULL,
    prompt       TEXT NOT NULL,
    calls        TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS procedures (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    kind               TEXT NOT NULL,
    trigger_text       TEXT NOT NULL,
    action_text        TEXT NOT NULL,
    rationale          TEXT NOT NULL,
    confidence         REAL NOT NULL,
    precondition       TEXT NOT NULL,
    source_episode_ids TEXT NOT NULL,
    status             TEXT NOT NULL
                       CHECK (status IN ('draft', 'approved', 'rejected', 'revoked', 'guardrail')),
    governed_tool      TEXT NOT NULL DEFAULT '',
    reviewed_in        TEXT NOT NULL DEFAULT '',
    name               TEXT NOT NULL DEFAULT '',
    UNIQUE (kind, trigger_text, action_text)
);
CREATE TABLE IF NOT EXISTS checkpoints (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation TEXT NOT NULL,
    turn         TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pause_tokens (
    token         TEXT PRIMARY KEY,
    conversation  TEXT NOT NULL,
    interaction   TEXT NOT NULL,
    question      TEXT NOT NULL,
    question_id   TEXT NOT NULL,
    checkpoint_id INTEGER REFERENCES checkpoints(id),
    consumed      INTEGER NOT NULL DEFAULT 0,
    claimed_by    TEXT
);
CREATE TABLE IF NOT EXISTS outbox (
    idempotency_key TEXT PRIMARY KEY,
    action          TEXT NOT NULL,
    payload         TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS effect_keys (
    subject         TEXT PRIMARY KEY,
    idempotency_key TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS lesson_support (
    lesson  TEXT NOT NULL,
    episode TEXT NOT NULL,
    PRIMARY KEY (lesson, episode)
);
";

/// A procedure's review status, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Promoted by consolidation, not yet reviewed: never recalled, never enforced.
    Draft,
    /// Approved by an operator naming the governed tool and its state predicates.
    Approved,
    /// Rejected by an operator; consolidation never re-drafts it.
    Rejected,
    /// Approved once, then withdrawn by an operator: it governs nothing
    /// and consolidation never re-drafts it.
    Revoked,
    /// A negative example ("never X") kept from a demonstration a reviewer
    /// rejected: listed for reviewers, never recalled, never enforced.
    Guardrail,
}

impl Status {
    /// The stored spelling, which is also the review projection's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Revoked => "revoked",
            Self::Guardrail => "guardrail",
        }
    }

    fn parse(text: &str) -> Self {
        match text {
            "approved" => Self::Approved,
            "rejected" => Self::Rejected,
            "revoked" => Self::Revoked,
            "guardrail" => Self::Guardrail,
            _ => Self::Draft,
        }
    }
}

/// One procedure as the database holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredProcedure {
    /// Row id, stable for the life of the database.
    pub id: i64,
    /// The draft kind (`action`, `preflight`, ...).
    pub kind: String,
    /// When the procedure applies, in words.
    pub trigger: String,
    /// What it says to do, in words; this is what the recall block shows.
    pub action: String,
    /// Why consolidation proposed it.
    pub rationale: String,
    /// The extractor's confidence.
    pub confidence: f64,
    /// The precondition list: bare tool names and `{"state": predicate}` entries.
    pub precondition: Value,
    /// The episodes the draft was extracted from.
    pub source_episode_ids: Vec<String>,
    /// Review status.
    pub status: Status,
    /// The tool an approval names; empty while a draft.
    pub governed_tool: String,
    /// The conversation of the operator turn that reviewed it (an audit
    /// trail; empty while a draft).
    pub reviewed_in: String,
    /// The name an operator gave it through the structured review door
    /// (empty when approved by an operator turn, or a draft).
    pub name: String,
}

/// What storing one extracted draft did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Promotion {
    /// A new draft row.
    Inserted,
    /// An existing draft gained source episodes.
    Reinforced,
    /// Nothing changed: already known, or already reviewed.
    Unchanged,
}

/// The connection to the help desk database. The connection sits behind a
/// mutex so the store can be shared (as `Arc<Store>`) with the governance
/// gate, whose stages must be `Send + Sync`.
#[derive(Debug)]
pub struct Store {
    conn: Mutex<Connection>,
    /// The durable directory the database and the run leases live in.
    dir: PathBuf,
    /// Whether a promotion refreshes reviewed procedures too (the
    /// `RelearnRewritesApproved` twin; the reference leaves them alone).
    refresh_reviewed: bool,
    /// Whether a promotion of a revoked procedure's lesson approves it
    /// again (the `RelearnRestoresRevoked` twin).
    restore_revoked: bool,
    /// Whether a promotion of a rejected draft's lesson opens it as a draft
    /// again (the `RejectedDraftRedrafted` twin).
    redraft_rejected: bool,
}

impl Store {
    /// Opens (creating if needed) the database in `dir`.
    ///
    /// WAL mode and a busy timeout let two processes, or two connections in
    /// one, redeem tokens concurrently without spurious "database is locked".
    ///
    /// # Errors
    ///
    /// When the file cannot be opened or the schema cannot be applied.
    pub fn open_in(dir: &Path) -> rusqlite::Result<Self> {
        let conn = Connection::open(dir.join(DATABASE_FILE))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn: Mutex::new(conn),
            dir: dir.to_owned(),
            refresh_reviewed: false,
            restore_revoked: false,
            redraft_rejected: false,
        })
    }

    fn db(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records one finished turn as an episode; returns its id.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn record_episode(
        &self,
        conversation: &str,
        prompt: &str,
        calls: &Value,
    ) -> rusqlite::Result<i64> {
        let conn = self.db();
        conn.execute(
            "INSERT INTO episodes (conversation, prompt, calls) VALUES (?1, ?2, ?3)",
            params![conversation, prompt, calls.to_string()],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// The most recent `limit` episodes, oldest first, as `(id, prompt, calls)`.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn recent_episodes(&self, limit: u32) -> rusqlite::Result<Vec<(i64, String, Value)>> {
        let conn = self.db();
        let mut statement = conn.prepare(
            "SELECT id, prompt, calls FROM (SELECT * FROM episodes ORDER BY id DESC LIMIT ?1) ORDER BY id",
        )?;
        let rows = statement.query_map(params![limit], |row| {
            let calls: String = row.get(2)?;
            Ok((
                row.get(0)?,
                row.get(1)?,
                serde_json::from_str(&calls).unwrap_or(Value::Null),
            ))
        })?;
        rows.collect()
    }

    /// The same store, refreshing reviewed procedures when re-learned (the
    /// flaw of the `RelearnRewritesApproved` twin).
    #[must_use]
    pub fn refreshing_reviewed(mut self) -> Self {
        self.refresh_reviewed = true;
        self
    }

    /// The same store, approving a revoked procedure again when its lesson
    /// is learned again (the flaw of the `RelearnRestoresRevoked` twin).
    #[must_use]
    pub fn restoring_revoked(mut self) -> Self {
        self.restore_revoked = true;
        self
    }

    /// The same store, opening a rejected draft again when its lesson is
    /// learned again (the flaw of the `RejectedDraftRedrafted` twin).
    #[must_use]
    pub fn redrafting_rejected(mut self) -> Self {
        self.redraft_rejected = true;
        self
    }

    /// Stores an extracted draft, deduplicated on `(kind, trigger, action)`.
    /// Its precondition is stored as a list of bare rules; an approval later
    /// appends the state predicates the operator named.
    ///
    /// A procedure that was already reviewed is left alone: a rejection must
    /// not come back as a fresh draft, and an approval must not be demoted.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn promote_draft(&self, draft: &ProceduralDraft) -> rusqlite::Result<Promotion> {
        let conn = self.db();
        let existing: Option<(i64, String, String)> = conn
            .query_row(
                "SELECT id, status, source_episode_ids FROM procedures
                 WHERE kind = ?1 AND trigger_text = ?2 AND action_text = ?3",
                params![draft.kind().as_str(), draft.trigger(), draft.action()],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()?;
        let sources = serde_json::to_string(draft.source_episode_ids()).unwrap_or_default();
        let precondition: Vec<&str> = draft.precondition().rules().collect();
        match existing {
            None => {
                conn.execute(
                    "INSERT INTO procedures (kind, trigger_text, action_text, rationale, confidence,
                         precondition, source_episode_ids, status)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'draft')",
                    params![
                        draft.kind().as_str(),
                        draft.trigger(),
                        draft.action(),
                        draft.rationale(),
                        draft.confidence(),
                        serde_json::to_string(&precondition).unwrap_or_default(),
                        sources
                    ],
                )?;
                Ok(Promotion::Inserted)
            }
            Some((id, status, known))
                if status != "draft"
                    && self.refresh_reviewed
                    && asked_again(&conn, &known, &sources)? =>
            {
                // A lesson's own example asked again: the procedure is
                // derived afresh, and the extractor's rule replaces the
                // reviewed one.
                conn.execute(
                    "UPDATE procedures SET source_episode_ids = ?2, precondition = ?3 WHERE id = ?1",
                    params![
                        id,
                        sources,
                        serde_json::to_string(&precondition).unwrap_or_default()
                    ],
                )?;
                Ok(Promotion::Reinforced)
            }
            Some((id, status, _)) if status == "rejected" && self.redraft_rejected => {
                // The rejection held until the lesson was seen again.
                conn.execute(
                    "UPDATE procedures SET status = 'draft' WHERE id = ?1",
                    params![id],
                )?;
                Ok(Promotion::Reinforced)
            }
            Some((id, status, _)) if status == "revoked" && self.restore_revoked => {
                // The lesson was approved once: approved it is again.
                conn.execute(
                    "UPDATE procedures SET status = 'approved' WHERE id = ?1",
                    params![id],
                )?;
                Ok(Promotion::Reinforced)
            }
            Some((id, status, known)) if status == "draft" && known != sources => {
                conn.execute(
                    "UPDATE procedures SET source_episode_ids = ?2, confidence = ?3, rationale = ?4
                     WHERE id = ?1",
                    params![id, sources, draft.confidence(), draft.rationale()],
                )?;
                Ok(Promotion::Reinforced)
            }
            Some(_) => Ok(Promotion::Unchanged),
        }
    }

    /// Every procedure, in id order.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn procedures(&self) -> rusqlite::Result<Vec<StoredProcedure>> {
        let conn = self.db();
        let mut statement = conn.prepare(
            "SELECT id, kind, trigger_text, action_text, rationale, confidence, precondition,
                    source_episode_ids, status, governed_tool, reviewed_in, name
             FROM procedures ORDER BY id",
        )?;
        let rows = statement.query_map([], |row| {
            let precondition: String = row.get(6)?;
            let sources: String = row.get(7)?;
            let status: String = row.get(8)?;
            Ok(StoredProcedure {
                id: row.get(0)?,
                kind: row.get(1)?,
                trigger: row.get(2)?,
                action: row.get(3)?,
                rationale: row.get(4)?,
                confidence: row.get(5)?,
                // An unreadable rule is an error, never "no rule": the gate
                // breaks closed on it rather than admitting every call.
                precondition: serde_json::from_str(&precondition).map_err(|error| {
                    rusqlite::Error::FromSqlConversionFailure(
                        6,
                        rusqlite::types::Type::Text,
                        Box::new(error),
                    )
                })?,
                source_episode_ids: serde_json::from_str(&sources).unwrap_or_default(),
                status: Status::parse(&status),
                governed_tool: row.get(9)?,
                reviewed_in: row.get(10)?,
                name: row.get(11)?,
            })
        })?;
        rows.collect()
    }

    /// Marks a draft approved, naming its tool and full precondition list,
    /// and the conversation the operator approved it in. Returns whether a
    /// draft row changed.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn approve(
        &self,
        id: i64,
        tool: &str,
        precondition: &Value,
        conversation: &str,
        name: &str,
    ) -> rusqlite::Result<bool> {
        let conn = self.db();
        let changed = conn.execute(
            "UPDATE procedures SET status = 'approved', governed_tool = ?2, precondition = ?3,
                 reviewed_in = ?4, name = ?5
             WHERE id = ?1 AND status = 'draft'",
            params![id, tool, precondition.to_string(), conversation, name],
        )?;
        Ok(changed == 1)
    }

    /// Replaces the precondition of the approved procedure named `name`.
    /// Returns whether a row changed.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn amend(
        &self,
        name: &str,
        precondition: &Value,
        conversation: &str,
    ) -> rusqlite::Result<bool> {
        let conn = self.db();
        let changed = conn.execute(
            "UPDATE procedures SET precondition = ?2, reviewed_in = ?3
             WHERE name = ?1 AND name != '' AND status = 'approved'",
            params![name, precondition.to_string(), conversation],
        )?;
        Ok(changed == 1)
    }

    /// Withdraws the approved procedure named `name`. Returns whether a row
    /// changed.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn revoke(&self, name: &str, conversation: &str) -> rusqlite::Result<bool> {
        let conn = self.db();
        let changed = conn.execute(
            "UPDATE procedures SET status = 'revoked', reviewed_in = ?2
             WHERE name = ?1 AND name != '' AND status = 'approved'",
            params![name, conversation],
        )?;
        Ok(changed == 1)
    }

    /// Keeps a rejected demonstration as a guardrail under `trigger` (the
    /// honest `RejectedAsGuardrail` variant): a row reviewers see, which
    /// governs no tool and is never recalled. Once per trigger.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn record_guardrail(&self, trigger: &str) -> rusqlite::Result<()> {
        self.db().execute(
            "INSERT OR IGNORE INTO procedures (kind, trigger_text, action_text, rationale,
                 confidence, precondition, source_episode_ids, status)
             VALUES ('guardrail', ?1, 'never repeat the handling a reviewer rejected',
                 'a reviewer rejected a demonstration', 1.0, '[]', '[]', 'guardrail')",
            params![trigger],
        )?;
        Ok(())
    }

    /// Marks a draft rejected in `conversation`. Returns whether a draft row
    /// changed.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn reject(&self, id: i64, conversation: &str) -> rusqlite::Result<bool> {
        let conn = self.db();
        let changed = conn.execute(
            "UPDATE procedures SET status = 'rejected', reviewed_in = ?2
             WHERE id = ?1 AND status = 'draft'",
            params![id, conversation],
        )?;
        Ok(changed == 1)
    }
}

/// The one error a turn reports when the database refuses: its kind and a
/// fixed message (never a query or a value).
pub(crate) fn store_error(_: rusqlite::Error) -> symfonic_evals::TurnError {
    symfonic_evals::TurnError::new(
        "StoreError",
        "the help desk database could not be read or written",
    )
}

/// Whether one of `sources`' episodes repeats the prompt of one of
/// `known`'s (both JSON lists of `episode-<id>`): a lesson's example asked
/// again. Only the `RelearnRewritesApproved` twin asks.
fn asked_again(conn: &Connection, known: &str, sources: &str) -> rusqlite::Result<bool> {
    let ids = |list: &str| -> Vec<i64> {
        serde_json::from_str::<Vec<String>>(list)
            .unwrap_or_default()
            .iter()
            .filter_map(|id| id.strip_prefix("episode-")?.parse().ok())
            .collect()
    };
    let prompt = |id: i64| -> rusqlite::Result<Option<String>> {
        conn.query_row(
            "SELECT prompt FROM episodes WHERE id = ?1",
            params![id],
            |row| row.get(0),
        )
        .optional()
    };
    let known = ids(known);
    let mut lessons = Vec::new();
    for id in &known {
        lessons.extend(prompt(*id)?);
    }
    for id in ids(sources).into_iter().filter(|id| !known.contains(id)) {
        if prompt(id)?.is_some_and(|p| lessons.contains(&p)) {
            return Ok(true);
        }
    }
    Ok(false)
}
