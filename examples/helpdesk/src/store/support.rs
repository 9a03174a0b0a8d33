//! Running totals of each lesson's support: the episodes that showed it,
//! added one episode at a time (the `RunningTotals` variant's store).

use rusqlite::params;

use super::Store;

impl Store {
    /// Adds `episode` to the support of `lesson` (once) and returns every
    /// episode supporting it, in the order they were added.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn add_support(&self, lesson: &str, episode: &str) -> rusqlite::Result<Vec<String>> {
        let conn = self.db();
        conn.execute(
            "INSERT OR IGNORE INTO lesson_support (lesson, episode) VALUES (?1, ?2)",
            params![lesson, episode],
        )?;
        let mut statement =
            conn.prepare("SELECT episode FROM lesson_support WHERE lesson = ?1 ORDER BY rowid")?;
        let rows = statement.query_map(params![lesson], |row| row.get(0))?;
        rows.collect()
    }

    /// How many (lesson, episode) pairs are counted.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn support_counted(&self) -> rusqlite::Result<u64> {
        let conn = self.db();
        conn.query_row("SELECT COUNT(*) FROM lesson_support", [], |row| row.get(0))
    }
}
