//! Episodic and procedural memory: every customer turn is remembered as an
//! episode (the request and the tools it called, in order), and the
//! consolidation cycle turns recurring episodes into procedural drafts.

pub mod consolidation;
pub mod totals;

use serde_json::Value;
use symfonic_evals::contracts::Episode;

use crate::store::Store;

/// How many recent episodes a consolidation cycle looks at.
pub const EPISODE_WINDOW: u32 = 200;

/// Remembers one finished turn.
///
/// # Errors
///
/// On a database error.
pub fn remember(
    store: &Store,
    conversation: &str,
    prompt: &str,
    tools: &[String],
) -> rusqlite::Result<i64> {
    store.record_episode(conversation, prompt, &Value::from(tools.to_vec()))
}

/// The recent episodes in the shape the library's extractors read.
///
/// # Errors
///
/// On a database error.
pub fn recent(store: &Store) -> rusqlite::Result<Vec<Episode>> {
    Ok(store
        .recent_episodes(EPISODE_WINDOW)?
        .into_iter()
        .map(|(id, prompt, calls)| {
            let tools = calls.as_array().map(Vec::as_slice).unwrap_or_default();
            tools
                .iter()
                .filter_map(Value::as_str)
                .fold(Episode::new(format!("episode-{id}"), prompt), Episode::tool)
        })
        .collect())
}
