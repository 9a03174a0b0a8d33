//! `ask_user`: pausing a turn for a person and redeeming the answer.
//!
//! A pause writes the in-flight turn to a checkpoint row and issues a
//! single-use token bound to it, both in the database, so a restart between
//! the pause and the answer loses nothing. Redemption runs in a fixed order:
//! find the token, validate the answer against the question that was asked,
//! spend the token atomically, then load the checkpoint the token is bound
//! to. Only after all four does the deployment continue the turn.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use symfonic_evals::{ResumeRequest, ToolCall, TurnError};

use crate::store::{store_error, Store, TokenRow};

/// The registered name of the interaction.
pub const ASK_USER: &str = "ask_user";

/// The error kind of a second redemption of one token.
pub const REPLAYED: &str = "PauseTokenReplayedError";

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
    /// The calls made before the pause.
    pub calls: Vec<ToolCall>,
    /// The id of the call that paused; the answer is filed under it.
    pub pending_call: String,
    /// How many calls the turn has made (next id follows on).
    pub call_count: u32,
}

/// What a successful redemption hands back.
#[derive(Debug, Clone, PartialEq)]
pub struct Redeemed {
    /// The interaction that paused.
    pub interaction: String,
    /// The paused turn, if the token was bound to a checkpoint.
    pub checkpoint: Option<Checkpoint>,
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

/// Pauses: writes the checkpoint (when `checkpoint` is given) and issues a
/// token bound to it. Returns the token.
///
/// # Errors
///
/// `StoreError` when the database refuses the write.
pub fn pause(
    store: &Store,
    question: &Value,
    checkpoint: Option<&Checkpoint>,
    conversation: &str,
) -> Result<String, TurnError> {
    let checkpoint_id = match checkpoint {
        Some(turn) => {
            let turn = serde_json::to_value(turn)
                .map_err(|_| TurnError::new("StoreError", "checkpoint not serializable"))?;
            Some(
                store
                    .save_checkpoint(conversation, &turn)
                    .map_err(store_error)?,
            )
        }
        None => None,
    };
    let token = fresh_token();
    let row = TokenRow {
        conversation: conversation.to_owned(),
        interaction: ASK_USER.to_owned(),
        question: question.clone(),
        checkpoint_id,
    };
    store.issue_token(&token, &row).map_err(store_error)?;
    Ok(token)
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
    for (field, kind) in schema {
        let fits = match (kind.as_str(), fields.get(field)) {
            (Some("boolean"), Some(value)) => value.is_boolean(),
            (Some("string"), Some(value)) => value.is_string(),
            (Some("number"), Some(value)) => value.is_number(),
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

/// Redeems a token with a person's answer. With `replay_guard` off the
/// token is spent without checking it was still unspent, which is the flaw
/// the `TokenRedeemableTwice` twin carries.
///
/// # Errors
///
/// `PauseTokenUnknownError`, `AnswerRejectedError`, [`REPLAYED`] or `StoreError`.
pub fn redeem(
    store: &Store,
    request: &ResumeRequest,
    replay_guard: bool,
) -> Result<Redeemed, TurnError> {
    let row = store
        .token(&request.token)
        .map_err(store_error)?
        .filter(|row| row.conversation == request.conversation)
        .ok_or_else(|| {
            TurnError::new(
                "PauseTokenUnknownError",
                "no pause was issued under this token",
            )
        })?;
    validate_answer(&row.question, &request.answer)?;
    let spent = if replay_guard {
        store.consume_token(&request.token)
    } else {
        store.consume_token_unguarded(&request.token)
    }
    .map_err(store_error)?;
    if !spent {
        return Err(TurnError::new(
            REPLAYED,
            "this pause token was already redeemed",
        ));
    }
    let checkpoint = match row.checkpoint_id {
        Some(id) => store
            .load_checkpoint(id)
            .map_err(store_error)?
            .and_then(|turn| serde_json::from_value(turn).ok()),
        None => None,
    };
    Ok(Redeemed {
        interaction: row.interaction,
        checkpoint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_must_fit_the_recorded_schema() {
        let question = json!({"question": "ok?", "schema": {"approved": "boolean"}});
        assert!(validate_answer(&question, &json!({"approved": true})).is_ok());
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
    fn tokens_do_not_repeat() {
        assert_ne!(fresh_token(), fresh_token());
    }
}
