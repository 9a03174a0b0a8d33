//! The business outbox the tools write their effects to, the durable
//! counters ids are drawn from, and the effect oracle the harness reads.
//!
//! Every effect a tool applies through the harness's ledger is written here
//! inside the ledger's own effect, under the same idempotency key, so the
//! outbox holds exactly one row per applied effect. [`effects_in_store`]
//! counts those rows from the durable directory alone; the harness compares
//! the count with the ledger after every step, so an effect written around
//! the ledger, or a ledger entry with no row behind it, shows.

use std::path::Path;

use std::io::Write;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use serde_json::{json, Value};

use super::{Store, DATABASE_FILE};

impl Store {
    /// Writes a business action to the outbox under its idempotency key; a
    /// key already written is left alone.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn write_outbox(&self, key: &str, action: &str, payload: &Value) -> rusqlite::Result<()> {
        let conn = self.db();
        conn.execute(
            "INSERT OR IGNORE INTO outbox (idempotency_key, action, payload) VALUES (?1, ?2, ?3)",
            params![key, action, payload.to_string()],
        )?;
        Ok(())
    }

    /// Appends a business action to the JSON-lines outbox (the
    /// `OutboxAsJsonLines` variant's layout) under its idempotency key; a
    /// key already written is left alone. One line per effect, written in
    /// one call, so a crash leaves whole lines only.
    ///
    /// # Errors
    ///
    /// When the file cannot be read or appended to.
    pub fn append_outbox_line(
        &self,
        key: &str,
        action: &str,
        payload: &Value,
    ) -> std::io::Result<()> {
        // The database connection's lock serialises writers in this process.
        let _held = self.db();
        let path = self.dir.join(OUTBOX_LINES_FILE);
        if outbox_lines(&path)?.iter().any(|line| line["key"] == key) {
            return Ok(());
        }
        let mut line = json!({ "key": key, "action": action, "payload": payload }).to_string();
        line.push('\n');
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        file.write_all(line.as_bytes())?;
        file.sync_data()
    }

    /// The idempotency key recorded for effects on `subject`, if one was.
    /// Only the `KeyRecordedAfterEffect` twin keeps keys this way.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn recorded_key(&self, subject: &str) -> rusqlite::Result<Option<String>> {
        let conn = self.db();
        conn.query_row(
            "SELECT idempotency_key FROM effect_keys WHERE subject = ?1",
            params![subject],
            |row| row.get(0),
        )
        .optional()
    }

    /// Records the idempotency key effects on `subject` go under.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn record_key(&self, subject: &str, key: &str) -> rusqlite::Result<()> {
        let conn = self.db();
        conn.execute(
            "INSERT OR IGNORE INTO effect_keys (subject, idempotency_key) VALUES (?1, ?2)",
            params![subject, key],
        )?;
        Ok(())
    }

    /// The next value of the durable counter `name`, starting at 1. Held in
    /// the database, so values keep rising across restarts and across
    /// every connection to the same file.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn next(&self, name: &str) -> rusqlite::Result<u64> {
        self.bump(name)
    }

    /// The value of the counter `name`: 0 until it is first moved on.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn counter(&self, name: &str) -> rusqlite::Result<u64> {
        let conn = self.db();
        conn.query_row(
            "SELECT value FROM counters WHERE name = ?1",
            params![name],
            |row| row.get(0),
        )
        .optional()
        .map(Option::unwrap_or_default)
    }

    fn bump(&self, name: &str) -> rusqlite::Result<u64> {
        let conn = self.db();
        conn.query_row(
            "INSERT INTO counters (name, value) VALUES (?1, 1)
             ON CONFLICT (name) DO UPDATE SET value = value + 1
             RETURNING value",
            params![name],
            |row| row.get(0),
        )
    }
}

/// The file of the JSON-lines outbox, in the durable directory.
pub const OUTBOX_LINES_FILE: &str = "outbox.jsonl";

/// The lines of the JSON-lines outbox at `path` (none when it does not
/// exist).
fn outbox_lines(path: &Path) -> std::io::Result<Vec<Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) => text
            .lines()
            .map(|line| serde_json::from_str(line).map_err(std::io::Error::other))
            .collect(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(error) => Err(error),
    }
}

/// The effect oracle: how many effects the desk's store in `dir` holds (one
/// outbox row per applied effect, in the outbox table or, for a desk that
/// keeps its outbox as JSON lines, one line). Opens the database read-only, so reading
/// it never changes what it counts; passed to the packs as
/// `effects_probe`.
///
/// # Errors
///
/// When there is no database in `dir` (the desk creates it when it opens,
/// so a missing one means the store is elsewhere) or it cannot be read.
pub fn effects_in_store(dir: &Path) -> Result<u64, String> {
    let path = dir.join(DATABASE_FILE);
    if !path.exists() {
        return Err(format!("no {DATABASE_FILE} in the durable directory"));
    }
    let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|error| format!("the store cannot be opened: {error}"))?;
    let rows: u64 = conn
        .query_row("SELECT COUNT(*) FROM outbox", [], |row| row.get(0))
        .map_err(|error| format!("the outbox cannot be read: {error}"))?;
    let lines = outbox_lines(&dir.join(OUTBOX_LINES_FILE))
        .map_err(|error| format!("the outbox file cannot be read: {error}"))?;
    Ok(rows + lines.len() as u64)
}
