//! Paused turns: their checkpoints, and the single-use tokens and question
//! ids that redeem them.
//!
//! A token row binds the token to the conversation that paused, the
//! question asked (with its response schema), the question's id and the
//! checkpoint of the stopped turn. The row's `consumed` flag is the one
//! place a redemption is decided: 0 while the pause waits, 2 while one
//! run of the desk carries the continuation (`claimed_by` names it), 1 once
//! the continuation is done. A claim left by a run that died
//! mid-continuation can be taken over, so a client's retry after a crash
//! finishes the turn; a live run's claim and a finished redemption never
//! can.

use rusqlite::{params, OptionalExtension, Row};
use serde_json::Value;

use super::Store;

/// A paused turn's token row.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenRow {
    /// The conversation that paused.
    pub conversation: String,
    /// The interaction that paused it.
    pub interaction: String,
    /// The recorded question, including its response schema.
    pub question: Value,
    /// The id the question was published under; a redemption must name it.
    pub question_id: String,
    /// The checkpoint the token is bound to, if one was written.
    pub checkpoint_id: Option<i64>,
}

const TOKEN_COLUMNS: &str = "conversation, interaction, question, question_id, checkpoint_id";

fn token_row(row: &Row<'_>) -> rusqlite::Result<TokenRow> {
    let question: String = row.get(2)?;
    Ok(TokenRow {
        conversation: row.get(0)?,
        interaction: row.get(1)?,
        question: serde_json::from_str(&question).unwrap_or(Value::Null),
        question_id: row.get(3)?,
        checkpoint_id: row.get(4)?,
    })
}

impl Store {
    /// Writes a paused turn's checkpoint; returns its id.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn save_checkpoint(&self, conversation: &str, turn: &Value) -> rusqlite::Result<i64> {
        let conn = self.db();
        conn.execute(
            "INSERT INTO checkpoints (conversation, turn) VALUES (?1, ?2)",
            params![conversation, turn.to_string()],
        )?;
        Ok(conn.last_insert_rowid())
    }

    /// Reads a checkpoint back.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn load_checkpoint(&self, id: i64) -> rusqlite::Result<Option<Value>> {
        let conn = self.db();
        let text: Option<String> = conn
            .query_row(
                "SELECT turn FROM checkpoints WHERE id = ?1",
                params![id],
                |row| row.get(0),
            )
            .optional()?;
        Ok(text.and_then(|text| serde_json::from_str(&text).ok()))
    }

    /// The ids of the checkpoints written for `conversation`, latest
    /// first.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn checkpoints_of(&self, conversation: &str) -> rusqlite::Result<Vec<i64>> {
        let conn = self.db();
        let mut query =
            conn.prepare("SELECT id FROM checkpoints WHERE conversation = ?1 ORDER BY id DESC")?;
        let ids = query.query_map(params![conversation], |row| row.get(0))?;
        ids.collect()
    }

    /// Issues a token for a pause, bound to `checkpoint_id` when there is one.
    ///
    /// # Errors
    ///
    /// On a database error (including a token collision).
    pub fn issue_token(&self, token: &str, row: &TokenRow) -> rusqlite::Result<()> {
        let conn = self.db();
        conn.execute(
            "INSERT INTO pause_tokens (token, conversation, interaction, question, question_id,
                 checkpoint_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                token,
                row.conversation,
                row.interaction,
                row.question.to_string(),
                row.question_id,
                row.checkpoint_id
            ],
        )?;
        Ok(())
    }

    /// Points an issued token at another pause (another conversation,
    /// question and checkpoint). Only the `OnePausePerDeployment` twin
    /// calls it: a token must name one pause for life.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn rearm_token(&self, token: &str, row: &TokenRow) -> rusqlite::Result<()> {
        let conn = self.db();
        conn.execute(
            "UPDATE pause_tokens SET conversation = ?2, interaction = ?3, question = ?4,
                 question_id = ?5, checkpoint_id = ?6
             WHERE token = ?1",
            params![
                token,
                row.conversation,
                row.interaction,
                row.question.to_string(),
                row.question_id,
                row.checkpoint_id
            ],
        )?;
        Ok(())
    }

    /// Looks a token up, spent or not.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn token(&self, token: &str) -> rusqlite::Result<Option<TokenRow>> {
        let conn = self.db();
        conn.query_row(
            &format!("SELECT {TOKEN_COLUMNS} FROM pause_tokens WHERE token = ?1"),
            params![token],
            token_row,
        )
        .optional()
    }

    /// The most recent token issued in `conversation`, spent or not, with
    /// its row. Only the `TokenNeverChecked` twin redeems by it.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn latest_token(&self, conversation: &str) -> rusqlite::Result<Option<(String, TokenRow)>> {
        let conn = self.db();
        conn.query_row(
            &format!(
                "SELECT {TOKEN_COLUMNS}, token FROM pause_tokens WHERE conversation = ?1
                 ORDER BY rowid DESC LIMIT 1"
            ),
            params![conversation],
            |row| Ok((row.get(5)?, token_row(row)?)),
        )
        .optional()
    }

    /// Whether a pause of `conversation` was answered and its turn
    /// finished: the `ApprovalReusedInConversation` twin's memory.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn answered_in(&self, conversation: &str) -> rusqlite::Result<bool> {
        let conn = self.db();
        conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM pause_tokens WHERE conversation = ?1 AND consumed = 1)",
            params![conversation],
            |row| row.get(0),
        )
    }

    /// Any token still unspent, in any conversation. Only the
    /// `OnePausePerDeployment` twin asks.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn unspent_token(&self) -> rusqlite::Result<Option<String>> {
        let conn = self.db();
        conn.query_row(
            "SELECT token FROM pause_tokens WHERE consumed = 0 ORDER BY rowid LIMIT 1",
            [],
            |row| row.get(0),
        )
        .optional()
    }

    /// Every token still unspent, oldest first. Only the
    /// `ApprovalGrantsEveryPending` twin asks.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn unspent_tokens(&self) -> rusqlite::Result<Vec<String>> {
        let conn = self.db();
        let mut statement =
            conn.prepare("SELECT token FROM pause_tokens WHERE consumed = 0 ORDER BY rowid")?;
        let tokens = statement.query_map([], |row| row.get(0))?;
        tokens.collect()
    }

    /// Spends a token for good, before its continuation runs. The
    /// `consumed = 0` guard makes this a single point of decision, but a
    /// crash inside the continuation then loses it: only the
    /// `ResumeNotRetriable` twin spends this way.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn consume_token(&self, token: &str) -> rusqlite::Result<bool> {
        let conn = self.db();
        let changed = conn.execute(
            "UPDATE pause_tokens SET consumed = 1 WHERE token = ?1 AND consumed = 0",
            params![token],
        )?;
        Ok(changed == 1)
    }

    /// Claims a token for the continuation run `run` is about to carry.
    /// Of any number of concurrent callers exactly one gets `true`; a claim
    /// is taken over only from a run that no longer holds its lease (it
    /// died mid-continuation, see [`super::runs`]), never from a live one
    /// and never once the continuation finished.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn claim_token(&self, token: &str, run: &str) -> rusqlite::Result<bool> {
        let conn = self.db();
        let fresh = conn.execute(
            "UPDATE pause_tokens SET consumed = 2, claimed_by = ?2
             WHERE token = ?1 AND consumed = 0",
            params![token, run],
        )?;
        if fresh == 1 {
            return Ok(true);
        }
        let holder: Option<Option<String>> = conn
            .query_row(
                "SELECT claimed_by FROM pause_tokens WHERE token = ?1 AND consumed = 2",
                params![token],
                |row| row.get(0),
            )
            .optional()?;
        let Some(Some(holder)) = holder else {
            return Ok(false);
        };
        if holder == run || super::runs::is_alive(&self.dir, &holder) {
            return Ok(false);
        }
        // The guard on the old holder makes the takeover atomic too.
        let taken = conn.execute(
            "UPDATE pause_tokens SET claimed_by = ?2
             WHERE token = ?1 AND consumed = 2 AND claimed_by = ?3",
            params![token, run, holder],
        )?;
        Ok(taken == 1)
    }

    /// Forgets every pause of `conversation` still waiting for an answer
    /// (its token rows unspent and unclaimed), for a reset of the
    /// conversation: their tokens are then unknown. A redemption already
    /// under way keeps its claim and may finish. Returns how many it forgot.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn forget_pending(&self, conversation: &str) -> rusqlite::Result<usize> {
        let conn = self.db();
        conn.execute(
            "DELETE FROM pause_tokens WHERE conversation = ?1 AND consumed = 0",
            params![conversation],
        )
    }

    /// Marks a claimed token's continuation done: from now on every
    /// redemption of it is a replay.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn finish_token(&self, token: &str) -> rusqlite::Result<()> {
        let conn = self.db();
        conn.execute(
            "UPDATE pause_tokens SET consumed = 1 WHERE token = ?1",
            params![token],
        )?;
        Ok(())
    }

    /// Gives back a claim `run` holds, when its continuation failed with an
    /// error the client may retry: the token redeems again, and a claim
    /// another run took over or a finished token is left alone.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn release_token(&self, token: &str, run: &str) -> rusqlite::Result<()> {
        let conn = self.db();
        conn.execute(
            "UPDATE pause_tokens SET consumed = 0, claimed_by = NULL
             WHERE token = ?1 AND consumed = 2 AND claimed_by = ?2",
            params![token, run],
        )?;
        Ok(())
    }

    /// The tokens whose continuation finished: the blocklist the
    /// `SpentTokensLoadedAtStart` twin loads when it opens.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn finished_tokens(&self) -> rusqlite::Result<std::collections::BTreeSet<String>> {
        let conn = self.db();
        let mut statement = conn.prepare("SELECT token FROM pause_tokens WHERE consumed = 1")?;
        let tokens = statement.query_map([], |row| row.get(0))?;
        tokens.collect()
    }

    /// Records `run`'s claim on a token without checking it: the
    /// `SpentTokensLoadedAtStart` twin trusts its blocklist instead.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn record_claim(&self, token: &str, run: &str) -> rusqlite::Result<()> {
        let conn = self.db();
        conn.execute(
            "UPDATE pause_tokens SET consumed = 2, claimed_by = ?2 WHERE token = ?1",
            params![token, run],
        )?;
        Ok(())
    }

    /// Spends a token without the guard: the flaw a replay-safe store avoids.
    /// Only the `TokenRedeemableTwice` twin calls it.
    ///
    /// # Errors
    ///
    /// On a database error.
    pub fn consume_token_unguarded(&self, token: &str) -> rusqlite::Result<bool> {
        let conn = self.db();
        let changed = conn.execute(
            "UPDATE pause_tokens SET consumed = 1 WHERE token = ?1",
            params![token],
        )?;
        Ok(changed >= 1)
    }
}

#[cfg(test)]
mod tests {
    use super::super::runs::RunLease;
    use super::*;

    fn issued(store: &Store) {
        let row = TokenRow {
            conversation: "c".into(),
            interaction: "ask_user".into(),
            question: Value::Null,
            question_id: "q-1".into(),
            checkpoint_id: None,
        };
        store.issue_token("t", &row).unwrap();
    }

    #[test]
    fn a_claim_passes_only_from_a_dead_run_and_never_once_finished() {
        let ctx = symfonic_evals::TargetContext::fresh(0).unwrap();
        let dir = ctx.durable_dir();
        let store = Store::open_in(dir).unwrap();
        issued(&store);
        let first = RunLease::take(dir).unwrap();
        let second = RunLease::take(dir).unwrap();
        assert!(store.claim_token("t", first.id()).unwrap());
        assert!(
            !store.claim_token("t", first.id()).unwrap(),
            "its own claim"
        );
        assert!(
            !store.claim_token("t", second.id()).unwrap(),
            "a live claim"
        );
        drop(first);
        assert!(store.claim_token("t", second.id()).unwrap(), "a dead claim");
        store.finish_token("t").unwrap();
        drop(second);
        let third = RunLease::take(dir).unwrap();
        assert!(!store.claim_token("t", third.id()).unwrap(), "finished");
        store.release_token("t", third.id()).unwrap();
        assert!(
            !store.claim_token("t", third.id()).unwrap(),
            "still finished"
        );
    }

    #[test]
    fn a_released_claim_redeems_again_and_only_its_holder_releases_it() {
        let ctx = symfonic_evals::TargetContext::fresh(0).unwrap();
        let dir = ctx.durable_dir();
        let store = Store::open_in(dir).unwrap();
        issued(&store);
        let run = RunLease::take(dir).unwrap();
        let other = RunLease::take(dir).unwrap();
        assert!(store.claim_token("t", run.id()).unwrap());
        store.release_token("t", other.id()).unwrap();
        assert!(!store.claim_token("t", run.id()).unwrap(), "not its claim");
        store.release_token("t", run.id()).unwrap();
        assert!(store.claim_token("t", run.id()).unwrap(), "released");
    }
}
