//! Checks on pauses across conversations: distinct tokens, and the pending
//! call a resume must resolve.

use super::Check;
use crate::assertion::Evidence;
use crate::evidence::ToolOutcome;

pub(super) fn token_distinct(evidence: &Evidence<'_>) -> Check {
    let expected = "a pause token no other conversation holds";
    let Some(pause) = evidence.record.pause() else {
        return Check::new(false, expected, "the turn did not pause");
    };
    let others = evidence
        .pauses
        .into_iter()
        .flatten()
        .filter(|(conversation, _)| conversation.as_str() != evidence.conversation);
    let mut shared = 0;
    let mut total = 0;
    for (_, retained) in others {
        total += 1;
        shared += usize::from(retained.token == pause.token);
    }
    Check::new(
        shared == 0,
        expected,
        format!("the token equals {shared} of {total} other conversation(s)' tokens"),
    )
}

pub(super) fn token_unpredictable(evidence: &Evidence<'_>) -> Check {
    let expected = "a pause token no holder of another conversation's token can work out";
    let Some(pause) = evidence.record.pause() else {
        return Check::new(false, expected, "the turn did not pause");
    };
    let retained = evidence.pauses.into_iter().flatten();
    let conversations: Vec<&str> = retained.clone().map(|(name, _)| name.as_str()).collect();
    let others: Vec<&str> = retained
        .filter(|(conversation, _)| conversation.as_str() != evidence.conversation)
        .map(|(_, pause)| pause.token.as_str())
        .collect();
    let predicted = others.iter().find_map(|earlier| {
        crate::packs::approval::tokens::predicts(earlier, &pause.token, &conversations)
    });
    match predicted {
        Some(how) => Check::new(
            false,
            expected,
            format!("the token is another conversation's token: {how}"),
        ),
        None => Check::new(
            true,
            expected,
            format!(
                "no one of {} other conversation(s)' tokens predicts it",
                others.len()
            ),
        ),
    }
}

/// Tokens shorter than this are not searched for: a short token matches
/// ordinary text by chance.
const SEARCHED_TOKEN_LEN: usize = 6;

pub(super) fn token_kept_from_model(evidence: &Evidence<'_>) -> Check {
    let expected = "no genuine pause token in the model input or in a call's arguments";
    let mut tokens: Vec<&str> = evidence
        .pauses
        .into_iter()
        .flatten()
        .map(|(_, retained)| retained.token.as_str())
        .chain(evidence.redeemed.map(|r| r.token.as_str()))
        .chain(evidence.record.pause().map(|p| p.token.as_str()))
        .filter(|token| token.len() >= SEARCHED_TOKEN_LEN)
        .collect();
    tokens.sort_unstable();
    tokens.dedup();
    let mut seen = Vec::new();
    if tokens
        .iter()
        .any(|t| evidence.record.model_input().contains(t))
    {
        seen.push("the model input".to_owned());
    }
    for (i, call) in evidence.record.tool_calls().iter().enumerate() {
        let arguments = call.arguments.to_string();
        if tokens.iter().any(|t| arguments.contains(t)) {
            seen.push(format!("the arguments of call {}", i + 1));
        }
    }
    // Where, never the token itself.
    let observed = if seen.is_empty() {
        format!("{} token(s) searched for, none found", tokens.len())
    } else {
        format!("a genuine token appears in {}", seen.join(" and "))
    };
    Check::new(seen.is_empty(), expected, observed)
}

pub(super) fn pending_resolved(evidence: &Evidence<'_>, tool: &str) -> Check {
    let expected =
        format!("the {tool} call the pause left pending is resolved, and not called again");
    let Some(redeemed) = evidence.redeemed else {
        return Check::new(false, expected, "the step redeemed no retained pause");
    };
    if redeemed.pending_calls.is_empty() {
        return Check::new(false, expected, "the pause reported no pending call");
    }
    let resolved = evidence.record.resolved();
    let settled = redeemed
        .pending_calls
        .iter()
        .filter(|id| {
            resolved
                .iter()
                .any(|r| r.id == **id && !matches!(r.outcome, ToolOutcome::Pending))
        })
        .count();
    let called_again = evidence
        .record
        .tool_calls()
        .iter()
        .filter(|call| call.name == tool)
        .count();
    Check::new(
        settled == redeemed.pending_calls.len() && called_again == 0,
        expected,
        format!(
            "{settled} of {} pending call(s) resolved; {tool} called {called_again} time(s)",
            redeemed.pending_calls.len()
        ),
    )
}
