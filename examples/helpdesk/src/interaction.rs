//! `ask_user`: pausing a turn for a person and redeeming the answer.
//!
//! A pause writes the in-flight turn to a checkpoint row and issues a
//! single-use token bound to it, with the id of the question asked, all in
//! the database, so a restart between the pause and the answer loses
//! nothing. Redemption runs in a fixed order: find the token issued in this
//! conversation, check the question id it names, validate the answer
//! against the question that was asked, claim the token atomically, then
//! load the checkpoint the token is bound to. Only after all five does the
//! deployment continue the turn; a refusal at any of them leaves the token
//! as it was. The token is spent for good once the continuation is done,
//! so a retry after a crash inside the continuation can finish it.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use symfonic_evals::{ResumeRequest, ToolCall, TurnError};

use crate::honest::jwt::Signer;
use crate::store::runs::RunLease;
use crate::store::{store_error, Store, TokenRow};
use crate::twins::Flaw;

/// The registered name of the interaction.
pub const ASK_USER: &str = "ask_user";

/// The error kind of a second redemption of one token.
pub const REPLAYED: &str = "PauseTokenReplayedError";

/// The error kind of a token this conversation was never issued.
pub const UNKNOWN: &str = "PauseTokenUnknownError";

/// The error kind of a redemption naming another question than the one asked.
pub const WRONG_QUESTION: &str = "PauseQuestionMismatchError";

/// A turn stopped mid-way, as the checkpoint stores it: enough to rebuild
/// it and carry on exactly where it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The conversation the turn belongs to.
    pub conversation: String,
    /// The user's request.
    pub prompt: String,
    /// The turn state it ran under.
    pub state: Option<Value>,
    /// Observations so far, including the pausing call.
    pub transcript: Vec<String>,
    /// The calls made before the pause, the pending one last.
    pub calls: Vec<ToolCall>,
    /// The id of the call that paused; the answer is filed under it.
    pub pending_call: String,
    /// How many calls the turn has made.
    pub call_count: u32,
}

/// What a successful redemption hands back.
#[derive(Debug, Clone, PartialEq)]
pub struct Redeemed {
    /// The token redeemed; [`Pauses::finish`] it once the continuation is
    /// done.
    pub token: String,
    /// The interaction that paused.
    pub interaction: String,
    /// The paused turn, if the token was bound to a checkpoint.
    pub checkpoint: Option<Checkpoint>,
}

/// What a pause issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issued {
    /// The single-use token.
    pub token: String,
    /// The id of the question asked.
    pub question_id: String,
    /// Whether the token row, read back, is bound to a checkpoint.
    pub bound: bool,
}

/// What the in-memory twins keep instead of the store: exactly what a
/// restart loses.
#[derive(Debug, Default)]
struct Volatile {
    checkpoints: BTreeMap<i64, Value>,
    spent: BTreeSet<String>,
    /// The checkpoints a resume has continued (the last-first twin's).
    continued: BTreeSet<i64>,
}

/// Pausing and redeeming over the store.
#[derive(Debug)]
pub struct Pauses {
    store: Arc<Store>,
    flaw: Option<Flaw>,
    memory: Mutex<Volatile>,
    /// This opening of the desk, alive while the desk is: claims name it,
    /// so a retry can tell a claim left by a crash from a live one.
    run: RunLease,
    /// Signs the tokens it issues, and verifies the ones it is handed, when
    /// it is the `JwtPauseTokens` variant's.
    signer: Option<Signer>,
    /// Issues UUIDv7 tokens, the `TimeOrderedPauseTokens` variant's.
    time_ordered: bool,
    /// Keeps each conversation's pauses under a session a reset moves on,
    /// the `ResetIsNewSession` variant's.
    sessions: bool,
}

impl Drop for Pauses {
    /// The `SpentMarksWrittenAtShutdown` twin writes the tokens it spent
    /// on its way out, as a write-behind cache flushed at shutdown does.
    fn drop(&mut self) {
        if self.has(Flaw::SpentMarksWrittenAtShutdown) {
            for token in std::mem::take(&mut self.memory().spent) {
                let _ = self.store.finish_token(&token);
            }
        }
    }
}

/// A fresh, unguessable-in-practice token. Seeded from the standard
/// library's per-process random keys; a production desk would draw it from
/// the operating system's CSPRNG.
fn fresh_token() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut words = [0u64; 2];
    for word in &mut words {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u128(nanos);
        hasher.write_u32(std::process::id());
        *word = hasher.finish();
    }
    format!("pt_{:016x}{:016x}", words[0], words[1])
}

/// Checks an answer against the response schema recorded with the question:
/// an object carrying exactly the declared fields, each of its declared type.
///
/// # Errors
///
/// `AnswerRejectedError` naming the offending field (never its value).
pub fn validate_answer(question: &Value, answer: &Value) -> Result<(), TurnError> {
    let reject = |why: String| Err(TurnError::new("AnswerRejectedError", why));
    let Some(schema) = question.get("schema").and_then(Value::as_object) else {
        return reject("the recorded question has no response schema".into());
    };
    let Some(fields) = answer.as_object() else {
        return reject("the answer is not an object".into());
    };
    if let Some(extra) = fields.keys().find(|key| !schema.contains_key(*key)) {
        return reject(format!("the answer has an undeclared field `{extra}`"));
    }
    // A held call is answered with a decision or with decisions, never
    // both and never with neither.
    if fields.is_empty() || (fields.contains_key("approved") && fields.contains_key("decisions")) {
        return reject("the answer must say `approved` or give `decisions`, not both".into());
    }
    for (field, kind) in schema {
        // A kind ending in `?` is a field the person may leave out.
        let kind = kind.as_str().unwrap_or_default();
        let (kind, optional) = kind
            .strip_suffix('?')
            .map_or((kind, false), |kind| (kind, true));
        let fits = match (kind, fields.get(field)) {
            (_, None) => optional,
            ("boolean", Some(value)) => value.is_boolean(),
            ("string", Some(value)) => value.is_string(),
            ("number", Some(value)) => value.is_number(),
            // The edit answer's decisions, one per held call.
            ("decisions", Some(value)) => {
                symfonic_evals::EditDecision::read(&serde_json::json!({ "decisions": value }))
                    .is_some()
            }
            _ => false,
        };
        if !fits {
            return reject(format!(
                "field `{field}` is missing or not of its declared type"
            ));
        }
    }
    Ok(())
}

/// The people entitled to answer a pause. An answer may name who gives
/// it in an `approver` field, beside the fields the question asked for; an
/// answer that names nobody is the desk's own console speaking.
pub const APPROVERS: [&str; 2] = ["duty-manager", "account-owner"];

/// The error kind of an answer given by someone not entitled to give it.
pub const NOT_ENTITLED: &str = "ApproverNotEntitledError";

/// `answer` without its `approver` field, once the approver it names (if
/// any) is found entitled; `check` is false for the twin that takes
/// anyone's word.
///
/// # Errors
///
/// [`NOT_ENTITLED`] for an approver not on [`APPROVERS`], or one that is
/// not a name.
pub fn entitled_answer(answer: &Value, check: bool) -> Result<Value, TurnError> {
    let mut answer = answer.clone();
    let Some(approver) = answer.as_object_mut().and_then(|a| a.remove("approver")) else {
        return Ok(answer);
    };
    let entitled = approver.as_str().is_some_and(|a| APPROVERS.contains(&a));
    if check && !entitled {
        return Err(TurnError::new(
            NOT_ENTITLED,
            "the answer was given by someone not entitled to answer this pause",
        ));
    }
    Ok(answer)
}

impl Pauses {
    /// Pauses and redemptions over `store` by the run holding `run` (with
    /// `flaw` switched on, if it is one of theirs).
    pub fn new(store: Arc<Store>, run: RunLease, flaw: Option<Flaw>) -> Self {
        let mut memory = Volatile::default();
        if flaw == Some(Flaw::SpentTokensLoadedAtStart) {
            // A blocklist of spent tokens, loaded when the desk opens.
            memory.spent = store.finished_tokens().unwrap_or_default();
        }
        Self {
            store,
            flaw,
            memory: Mutex::new(memory),
            run,
            signer: None,
            time_ordered: false,
            sessions: false,
        }
    }

    /// Issues time-ordered tokens (UUIDv7): random, sharing a prefix when
    /// issued close together.
    #[must_use]
    pub fn time_ordered(mut self) -> Self {
        self.time_ordered = true;
        self
    }

    /// Keeps pauses per session: a reset opens a new one for the
    /// conversation, and a token redeems only in its current session.
    #[must_use]
    pub fn per_session(mut self) -> Self {
        self.sessions = true;
        self
    }

    /// The key pauses of `conversation` are filed under: the conversation
    /// itself, or with the sessions variant its current session.
    fn filed_under(&self, conversation: &str) -> Result<String, TurnError> {
        if !self.sessions {
            return Ok(conversation.to_owned());
        }
        let session = self
            .store
            .counter(&format!("session:{conversation}"))
            .map_err(store_error)?;
        Ok(format!("{conversation}#session-{session}"))
    }

    /// Issues signed tokens (JWTs) and redeems only tokens `signer` signed.
    #[must_use]
    pub fn signing(mut self, signer: Signer) -> Self {
        self.signer = Some(signer);
        self
    }

    /// A fresh token for a pause of `conversation` on question `question_id`.
    fn token_for(&self, conversation: &str, question_id: &str) -> String {
        if self.has(Flaw::TokensNumberedInOrder) {
            // Unique, durable, never forgeable by a changed letter: each
            // token is looked up. And the next one is this one plus one.
            if let Ok(n) = self.store.next("pause-token") {
                return format!("pt_{n:08}");
            }
        }
        if self.time_ordered {
            return crate::honest::uuid_v7();
        }
        match &self.signer {
            Some(signer) => signer.issue(&serde_json::json!({
                "sub": conversation,
                "qid": question_id,
                "jti": fresh_token(),
                "iat": SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            })),
            None => fresh_token(),
        }
    }

    fn has(&self, flaw: Flaw) -> bool {
        self.flaw == Some(flaw)
    }

    fn memory(&self) -> MutexGuard<'_, Volatile> {
        self.memory.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn save(&self, conversation: &str, checkpoint: &Checkpoint) -> Result<i64, TurnError> {
        let turn = serde_json::to_value(checkpoint)
            .map_err(|_| TurnError::new("StoreError", "checkpoint not serializable"))?;
        if self.has(Flaw::CheckpointOnlyInMemory) {
            // The store gets the checkpoint's row; the turn itself is cached.
            let id = self
                .store
                .save_checkpoint(conversation, &Value::Null)
                .map_err(store_error)?;
            self.memory().checkpoints.insert(id, turn);
            return Ok(id);
        }
        self.store
            .save_checkpoint(conversation, &turn)
            .map_err(store_error)
    }

    pub(crate) fn load(&self, id: i64) -> Result<Option<Checkpoint>, TurnError> {
        let turn = if self.has(Flaw::CheckpointOnlyInMemory) {
            self.memory().checkpoints.get(&id).cloned()
        } else {
            self.store.load_checkpoint(id).map_err(store_error)?
        };
        Ok(turn.and_then(|turn| serde_json::from_value(turn).ok()))
    }

    /// Pauses `conversation` on `question`, asked by the call of
    /// `interaction` that waits: writes the checkpoint (when `checkpoint`
    /// is given) and issues a fresh token bound to it, with a fresh
    /// question id.
    ///
    /// # Errors
    ///
    /// `StoreError` when the database refuses the write.
    pub fn pause(
        &self,
        conversation: &str,
        interaction: &str,
        question: &Value,
        checkpoint: Option<&Checkpoint>,
    ) -> Result<Issued, TurnError> {
        let checkpoint_id = checkpoint
            .map(|turn| self.save(conversation, turn))
            .transpose()?;
        let n = self.store.next("question").map_err(store_error)?;
        let row = TokenRow {
            conversation: self.filed_under(conversation)?,
            interaction: interaction.to_owned(),
            question: question.clone(),
            question_id: format!("q-{n}"),
            checkpoint_id,
        };
        let pending = if self.has(Flaw::OnePausePerDeployment) {
            self.store.unspent_token().map_err(store_error)?
        } else {
            None
        };
        let token = match pending {
            // The desk's one pending slot, re-armed for the newest pause.
            Some(token) => {
                self.store.rearm_token(&token, &row).map_err(store_error)?;
                token
            }
            None => {
                let token = self.token_for(conversation, &row.question_id);
                self.store.issue_token(&token, &row).map_err(store_error)?;
                token
            }
        };
        // Measured, not assumed: read back whether the token is bound.
        let bound = self
            .store
            .token(&token)
            .map_err(store_error)?
            .is_some_and(|row| row.checkpoint_id.is_some());
        Ok(Issued {
            token,
            question_id: row.question_id,
            bound,
        })
    }

    /// The token row a redemption names: the token issued to this
    /// conversation, or a refusal.
    fn find(&self, request: &ResumeRequest) -> Result<(String, TokenRow), TurnError> {
        let unknown = || TurnError::new(UNKNOWN, "no pause was issued under this token");
        // A signed token is verified before anything is looked up by it.
        if let Some(signer) = &self.signer {
            signer.verify(&request.token).ok_or_else(unknown)?;
        }
        let found = if self.has(Flaw::TokenNeverChecked) {
            self.store.latest_token(&request.conversation)
        } else {
            self.store
                .token(&request.token)
                .map(|row| row.map(|row| (request.token.clone(), row)))
        }
        .map_err(store_error)?;
        let any_conversation = self.has(Flaw::TokenRedeemsAnyConversation);
        let filed = self.filed_under(&request.conversation)?;
        found
            .filter(|(_, row)| any_conversation || row.conversation == filed)
            .ok_or_else(unknown)
    }

    /// Claims `token` for this redemption's continuation: granted to
    /// exactly one redemption, and again only to a retry after the run
    /// that held it died.
    fn spend(&self, token: &str) -> Result<(), TurnError> {
        let spent = if self.has(Flaw::SpentMarkOnlyInMemory) {
            Ok(self.memory().spent.insert(token.to_owned()))
        } else if self.has(Flaw::SpentMarksWrittenAtShutdown) {
            // Marks written by an earlier, orderly shutdown count; this
            // run's own wait in memory for the next one.
            self.store.finished_tokens().map(|finished| {
                !finished.contains(token) && self.memory().spent.insert(token.to_owned())
            })
        } else if self.has(Flaw::SpentTokensLoadedAtStart) {
            // The blocklist decides; the store only records the claim.
            if self.memory().spent.contains(token) {
                Ok(false)
            } else {
                self.store.record_claim(token, self.run.id()).map(|()| true)
            }
        } else if self.has(Flaw::TokenRedeemableTwice) {
            self.store.consume_token_unguarded(token)
        } else if self.has(Flaw::ResumeNotRetriable) {
            self.store.consume_token(token)
        } else {
            self.store.claim_token(token, self.run.id())
        }
        .map_err(store_error)?;
        if spent {
            Ok(())
        } else {
            Err(TurnError::new(
                REPLAYED,
                "this pause token was already redeemed",
            ))
        }
    }

    /// Marks the continuation of `token` done (see [`Pauses::redeem`]):
    /// after this every redemption of it is a replay.
    ///
    /// # Errors
    ///
    /// `StoreError` when the database refuses the write.
    pub fn finish(&self, token: &str) -> Result<(), TurnError> {
        if self.has(Flaw::SpentMarkOnlyInMemory) || self.has(Flaw::SpentMarksWrittenAtShutdown) {
            return Ok(());
        }
        if self.has(Flaw::SpentTokensLoadedAtStart) {
            self.memory().spent.insert(token.to_owned());
        }
        self.store.finish_token(token).map_err(store_error)
    }

    /// Gives back this run's claim on `token` after its continuation failed
    /// with an error: the client's retry redeems it again. Twins that spend
    /// tokens outright have nothing to give back.
    ///
    /// # Errors
    ///
    /// `StoreError` when the database refuses the write.
    pub fn release(&self, token: &str) -> Result<(), TurnError> {
        if self.has(Flaw::SpentMarkOnlyInMemory)
            || self.has(Flaw::SpentMarksWrittenAtShutdown)
            || self.has(Flaw::TokenRedeemableTwice)
            || self.has(Flaw::ResumeNotRetriable)
        {
            return Ok(());
        }
        self.store
            .release_token(token, self.run.id())
            .map_err(store_error)
    }

    /// Forgets the pauses `conversation` still has pending, durably, for a
    /// reset: their tokens are refused from now on. The `ResetKeepsPause`
    /// twin's reset clears the transcript only and leaves them redeemable.
    ///
    /// # Errors
    ///
    /// `StoreError` when the database refuses the write.
    pub fn forget(&self, conversation: &str) -> Result<(), TurnError> {
        if self.has(Flaw::ResetKeepsPause) {
            return Ok(());
        }
        if self.sessions {
            // A new session: the old one's pauses stay, out of reach.
            return self
                .store
                .next(&format!("session:{conversation}"))
                .map(drop)
                .map_err(store_error);
        }
        self.store
            .forget_pending(conversation)
            .map(drop)
            .map_err(store_error)
    }

    /// Redeems a token with a person's answer; see the module documentation
    /// for the order of the checks.
    ///
    /// # Errors
    ///
    /// [`UNKNOWN`], [`WRONG_QUESTION`], `AnswerRejectedError`, [`REPLAYED`]
    /// or `StoreError`.
    pub fn redeem(&self, request: &ResumeRequest) -> Result<Redeemed, TurnError> {
        let (token, row) = self.find(request)?;
        let asked = Some(row.question_id.as_str());
        if request.question_id.as_deref() != asked && !self.has(Flaw::QuestionIdIgnored) {
            return Err(TurnError::new(
                WRONG_QUESTION,
                "the answer names another question than the one this pause asked",
            ));
        }
        // Who answered is checked before anything else about the answer,
        // and before the token is spent: a refusal leaves it redeemable.
        let answer = entitled_answer(&request.answer, !self.has(Flaw::AnyApproverAccepted))?;
        if self.has(Flaw::UnfitAnswerSpendsToken) {
            self.spend(&token)?;
            validate_answer(&row.question, &answer)?;
        } else {
            if self.has(Flaw::AnswerCoerced) {
                validate_answer(&row.question, &coerced(&answer))?;
            } else if !self.has(Flaw::UnfitAnswerAccepted) {
                validate_answer(&row.question, &answer)?;
            }
            self.spend(&token)?;
        }
        let slot = if self.has(Flaw::CheckpointPerConversation) {
            self.store
                .checkpoints_of(&row.conversation)
                .map_err(store_error)?
                .first()
                .copied()
        } else if self.has(Flaw::PausesAnsweredLastFirst) {
            // Any genuine token answers the top of the conversation's
            // stack of pauses not yet continued.
            let stacked = self
                .store
                .checkpoints_of(&row.conversation)
                .map_err(store_error)?;
            let mut memory = self.memory();
            let top = stacked
                .into_iter()
                .find(|id| !memory.continued.contains(id));
            memory.continued.extend(top);
            top
        } else {
            row.checkpoint_id
        };
        let checkpoint = match slot {
            Some(id) => self.load(id)?,
            None => None,
        };
        Ok(Redeemed {
            token,
            interaction: row.interaction,
            checkpoint,
        })
    }
}

/// The answer a lax validator would see: each look-alike of a boolean
/// (`"true"`, `"yes"`, `1` and their opposites) read as that boolean.
fn coerced(answer: &Value) -> Value {
    match answer {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, value)| (key.clone(), coerced(value)))
                .collect(),
        ),
        Value::String(text) if matches!(text.as_str(), "true" | "yes") => Value::Bool(true),
        Value::String(text) if matches!(text.as_str(), "false" | "no") => Value::Bool(false),
        Value::Number(n) if n.as_u64() == Some(1) => Value::Bool(true),
        Value::Number(n) if n.as_u64() == Some(0) => Value::Bool(false),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_must_fit_the_recorded_schema() {
        let question =
            json!({"question": "ok?", "schema": {"approved": "boolean", "when": "string?"}});
        assert!(validate_answer(&question, &json!({"approved": true})).is_ok());
        assert!(validate_answer(&question, &json!({"approved": true, "when": "later"})).is_ok());
        assert!(validate_answer(&question, &json!({"approved": true, "when": 1})).is_err());
        let held = json!({"question": "ok?", "schema": {"approved": "boolean?", "decisions": "decisions?"}});
        let edit =
            json!({"decisions": [{"type": "edit", "edited_action": {"name": "t", "args": {}}}]});
        assert!(validate_answer(&held, &edit).is_ok());
        assert!(validate_answer(&held, &json!({"approved": false})).is_ok());
        for bad in [
            json!({}),
            json!({"decisions": [{"type": "maybe"}]}),
            json!({"approved": true, "decisions": [{"type": "approve"}]}),
        ] {
            assert!(validate_answer(&held, &bad).is_err(), "{bad}");
        }
        for bad in [
            json!({"approved": "yes"}),
            json!({}),
            json!({"approved": true, "x": 1}),
            json!(true),
        ] {
            let error = validate_answer(&question, &bad).unwrap_err();
            assert_eq!(error.kind, "AnswerRejectedError");
        }
    }

    #[test]
    fn either_entitled_approver_may_answer_and_nobody_else() {
        for approver in APPROVERS {
            let answer = json!({"approved": true, "approver": approver});
            assert_eq!(
                entitled_answer(&answer, true).unwrap(),
                json!({"approved": true})
            );
        }
        let console = json!({"approved": false});
        assert_eq!(entitled_answer(&console, true).unwrap(), console);
        for foreign in [json!("intern"), json!(7), json!(["duty-manager"])] {
            let answer = json!({"approved": true, "approver": foreign});
            assert_eq!(
                entitled_answer(&answer, true).unwrap_err().kind,
                NOT_ENTITLED
            );
            // The twin takes anyone's word.
            assert!(entitled_answer(&answer, false).is_ok());
        }
    }

    #[test]
    fn tokens_do_not_repeat() {
        assert_ne!(fresh_token(), fresh_token());
    }
}
