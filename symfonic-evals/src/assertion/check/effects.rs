//! Checks on what the harness owns about effects: the ledger's counts, what
//! a step moved, and the adopter's oracle over the deployment's own store.

use super::Check;
use crate::assertion::Evidence;
use crate::ledger::LedgerCounts;
use crate::Retries;

fn ledger_text(counts: LedgerCounts) -> String {
    format!(
        "attempts={} effects={} duplicates={}",
        counts.attempts, counts.effects, counts.duplicates
    )
}

pub(super) fn counts(
    evidence: &Evidence<'_>,
    attempts: u64,
    effects: u64,
    duplicates: u64,
) -> Check {
    let want = LedgerCounts {
        attempts,
        effects,
        duplicates,
    };
    Check::new(
        evidence.ledger == want,
        ledger_text(want),
        ledger_text(evidence.ledger),
    )
}

pub(super) fn delta(
    evidence: &Evidence<'_>,
    attempts: u64,
    effects: u64,
    duplicates: u64,
) -> Check {
    let (now, before) = (evidence.ledger, evidence.ledger_before);
    let moved = LedgerCounts {
        attempts: now.attempts.saturating_sub(before.attempts),
        effects: now.effects.saturating_sub(before.effects),
        duplicates: now.duplicates.saturating_sub(before.duplicates),
    };
    let want = LedgerCounts {
        attempts,
        effects,
        duplicates,
    };
    Check::new(
        moved == want,
        format!("the step moves the ledger by {}", ledger_text(want)),
        format!("it moved {}", ledger_text(moved)),
    )
}

/// The effects of `tool` the step applied (see [`Assertion::ToolEffects`]):
/// the effects that name it when any effect of the step names a tool, the
/// whole ledger's otherwise.
///
/// [`Assertion::ToolEffects`]: crate::Assertion::ToolEffects
pub(super) fn of_tool(
    evidence: &Evidence<'_>,
    tool: &str,
    effects: u64,
    retries: Retries,
) -> Check {
    let named = evidence.ledger_events.iter().any(|e| e.tool.is_some());
    let (mine, others): (Vec<_>, Vec<_>) = evidence
        .ledger_events
        .iter()
        .partition(|e| !named || e.tool.as_deref() == Some(tool));
    let applied = mine.iter().filter(|e| e.applied).count() as u64;
    let duplicates = mine.len() as u64 - applied;
    let other_effects = others.iter().filter(|e| e.applied).count();
    let pass = applied == effects && (duplicates == 0 || retries == Retries::SameKey);
    let judged = if named {
        format!("`{tool}`'s effects (other tools' effects allowed: {other_effects} applied)")
    } else {
        "the whole ledger (no effect of the step named its tool)".to_owned()
    };
    let retries_text = match retries {
        Retries::Exact => "no retry",
        Retries::SameKey => "same-key retries accepted",
    };
    Check::new(
        pass,
        format!("the step applies {effects} effect(s) of `{tool}` ({retries_text})"),
        format!("{judged}: {applied} applied, {duplicates} duplicate(s)"),
    )
}

/// How a report names the tool an effect counts under: its name, or
/// `(unnamed)` for effects that named none.
pub(crate) fn tool_label(tool: &str) -> &str {
    if tool.is_empty() {
        "(unnamed)"
    } else {
        tool
    }
}

fn per_tool_text(counts: &std::collections::BTreeMap<String, u64>) -> String {
    if counts.is_empty() {
        return "none".to_owned();
    }
    counts
        .iter()
        .map(|(tool, n)| format!("{} {n}", tool_label(tool)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// See [`Assertion::EffectsWithheld`](crate::Assertion::EffectsWithheld).
pub(super) fn withheld(
    evidence: &Evidence<'_>,
    approved: &std::collections::BTreeMap<String, u64>,
) -> Check {
    let here = crate::ledger::applied_by_tool(evidence.trial_events);
    let withheld: Vec<&str> = approved
        .iter()
        .filter(|(tool, n)| here.get(*tool).copied().unwrap_or(0) < **n)
        .map(|(tool, _)| tool_label(tool))
        .collect();
    let observed = if withheld.is_empty() {
        format!(
            "this run applied {}: at least as many of every tool's effects as the approval \
             ({}), so the answer made no difference to what was done",
            per_tool_text(&here),
            per_tool_text(approved)
        )
    } else {
        format!(
            "this run applied {} against the approval's {}: withheld {}",
            per_tool_text(&here),
            per_tool_text(approved),
            withheld.join(", ")
        )
    };
    Check::new(
        approved.is_empty() || !withheld.is_empty(),
        "fewer effects than the approval applied, of at least one of its tools (effects of \
         other tools allowed)",
        observed,
    )
}

/// See [`Assertion::AskedOrWithheld`](crate::Assertion::AskedOrWithheld).
pub(super) fn asked_or_withheld(
    evidence: &Evidence<'_>,
    approved: &std::collections::BTreeMap<String, u64>,
) -> Check {
    let expected = format!(
        "the request paused for a person again, or attempted no effect of the approval's tools \
         ({})",
        per_tool_text(approved)
    );
    if evidence.record.pause().is_some() {
        return Check::new(true, expected, "it paused");
    }
    // Attempts count, not only new effects: a request the deployment
    // carries out again without asking is granted, even when the ledger
    // finds its key applied before.
    let here = crate::ledger::attempted_by_tool(evidence.ledger_events);
    let granted: Vec<&str> = here
        .keys()
        .filter(|tool| approved.contains_key(*tool))
        .map(|tool| tool_label(tool))
        .collect();
    let observed = if granted.is_empty() {
        format!("it did not pause, and attempted {}", per_tool_text(&here))
    } else {
        format!(
            "it did not pause, and attempted {}: the earlier approval was taken for this request \
             ({})",
            per_tool_text(&here),
            granted.join(", ")
        )
    };
    Check::new(granted.is_empty(), expected, observed)
}

/// See [`Assertion::EffectsOfOneApproval`](crate::Assertion::EffectsOfOneApproval).
pub(super) fn of_one_approval(
    evidence: &Evidence<'_>,
    approved: &std::collections::BTreeMap<String, u64>,
    retries: crate::assertion::Retries,
) -> Check {
    let applied = crate::ledger::applied_by_tool(evidence.ledger_events);
    let attempted = crate::ledger::attempted_by_tool(evidence.ledger_events);
    // The pause's own effects posted again under their keys (a framework
    // that runs the paused step again from its start) are no part of what
    // the approval carried out. Under exact retries every other attempt is
    // the deployment acting once; a retry policy makes extra attempts
    // legitimate, so only what they applied is bounded.
    let own: Vec<_> = evidence
        .ledger_events
        .iter()
        .filter(|event| !pause_effect_again(evidence, event))
        .cloned()
        .collect();
    let own_attempts = crate::ledger::attempted_by_tool(&own);
    let (bounded, bound_text) = match retries {
        crate::assertion::Retries::Exact => (&own_attempts, "attempts"),
        crate::assertion::Retries::SameKey => (&applied, "applied effects"),
    };
    let count = |counts: &std::collections::BTreeMap<String, u64>, tool: &str| {
        counts.get(tool).copied().unwrap_or(0)
    };
    let done_before = done_before(evidence);
    let mut wrong = Vec::new();
    for (tool, &n) in approved {
        let label = tool_label(tool);
        // A step that attempts none of a tool's effects, when other
        // requests of the trial already applied as many, found the request
        // carried out (the same request approved twice), as a desk that
        // remembers what it did, without asking the ledger, answers.
        let found_done = count(&own_attempts, tool) == 0 && count(&done_before, tool) >= n;
        if count(&own_attempts, tool) < n && !found_done {
            wrong.push(format!("{label}: carried out less than the approval did"));
        }
        if count(bounded, tool) > n {
            wrong.push(format!(
                "{label}: more {bound_text} than one approval's (another request carried out too)"
            ));
        }
    }
    let observed = format!(
        "attempted {}, applied {}{}",
        per_tool_text(&attempted),
        per_tool_text(&applied),
        if wrong.is_empty() {
            String::new()
        } else {
            format!(": {}", wrong.join("; "))
        }
    );
    Check::new(
        wrong.is_empty(),
        format!(
            "of each of the approval's tools ({}), at least as many attempts and at most as many \
             {bound_text} as one approval",
            per_tool_text(approved)
        ),
        observed,
    )
}

/// The effects, per tool, the trial applied before the step other than
/// those of the pause the step answers: what other requests carried out.
fn done_before(evidence: &Evidence<'_>) -> std::collections::BTreeMap<String, u64> {
    let mut done = crate::ledger::applied_by_tool(evidence.trial_events);
    let not_before = [evidence.ledger_events, evidence.since_pause];
    for (tool, n) in not_before
        .iter()
        .flat_map(|e| crate::ledger::applied_by_tool(e))
    {
        if let Some(count) = done.get_mut(&tool) {
            *count = count.saturating_sub(n);
        }
    }
    done
}

/// Whether `event` is an effect the conversation's pause applied, attempted
/// again under the same key, tool and (where both name them) arguments and
/// refused by the ledger: the paused step run again from its start, as
/// LangGraph runs a node again on resume, not another request carried out.
fn pause_effect_again(evidence: &Evidence<'_>, event: &crate::ledger::LedgerEvent) -> bool {
    !event.applied
        && evidence.since_pause.iter().any(|before| {
            before.applied
                && before.key == event.key
                && before.tool == event.tool
                && (before.arguments.is_none()
                    || event.arguments.is_none()
                    || before.arguments == event.arguments)
        })
}

/// See [`Assertion::KeysNotShared`](crate::Assertion::KeysNotShared).
pub(super) fn keys_not_shared(evidence: &Evidence<'_>, retries: Retries) -> Check {
    let expected = match retries {
        Retries::Exact => {
            "no attempt refused as already applied: with no crash there is no retry \
             (retries = exact), save an effect of the paused step attempted again under its key \
             on its resume"
        }
        Retries::SameKey => {
            "every attempt refused as already applied is the effect applied under its key (same \
             tool, and same arguments where both name them; retries = same_key)"
        }
    };
    let first_applied = |key: &str| {
        evidence
            .trial_events
            .iter()
            .find(|event| event.applied && event.key == key)
    };
    let differs =
        |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(a), Some(b)) if a != b);
    let refused: Vec<_> = evidence
        .ledger_events
        .iter()
        .filter(|e| !e.applied)
        .collect();
    let shared = refused.iter().find_map(|event| {
        let applied = first_applied(&event.key)?;
        (differs(&applied.tool, &event.tool) || differs(&applied.arguments, &event.arguments))
            .then_some((applied, *event))
    });
    if let Some((applied, lost)) = shared {
        return Check::new(
            false,
            expected,
            format!(
                "two effects share key {}: `{}` was applied under it, and `{}` with {} arguments \
                 was refused as already applied, so it never happened",
                crate::redact::short_digest(applied.key.as_bytes()),
                tool_label(applied.tool.as_deref().unwrap_or_default()),
                tool_label(lost.tool.as_deref().unwrap_or_default()),
                if lost.arguments == applied.arguments {
                    "the same"
                } else {
                    "other"
                }
            ),
        );
    }
    if retries == Retries::SameKey {
        return Check::new(
            true,
            expected,
            format!(
                "{} attempt(s) refused as already applied, each a retry of its key's effect",
                refused.len()
            ),
        );
    }
    // Nothing tells these refusals from the effect applied under their
    // key, and with no crash nothing retries: a second effect sharing the
    // key, or the effect sent twice. Only the paused step's own effects,
    // attempted again when its resume runs it from the start, are neither.
    let unexplained: Vec<_> = refused
        .iter()
        .filter(|event| !pause_effect_again(evidence, event))
        .collect();
    let Some(first) = unexplained.first() else {
        return Check::new(
            true,
            expected,
            if refused.is_empty() {
                "no attempt refused as already applied".to_owned()
            } else {
                format!(
                    "{} attempt(s) refused as already applied, each an effect of the paused step \
                     attempted again under its key",
                    refused.len()
                )
            },
        );
    };
    let applied = first_applied(&first.key);
    let arguments = match (applied.and_then(|a| a.arguments.as_ref()), &first.arguments) {
        (_, None) => "no arguments",
        (None, Some(_)) => "arguments",
        (Some(_), Some(_)) => "the same arguments",
    };
    let under = match applied {
        Some(applied) => format!(
            "the key of a `{}` effect applied in this trial",
            tool_label(applied.tool.as_deref().unwrap_or_default())
        ),
        None => "a key no attempt of this trial applied".to_owned(),
    };
    Check::new(
        false,
        expected,
        format!(
            "{} attempt(s) refused as already applied with no crash and no retry; the first, of \
             `{}` with {arguments}, under key {} ({under}): a second effect sharing the key, \
             which never happened, or the effect sent twice",
            unexplained.len(),
            tool_label(first.tool.as_deref().unwrap_or_default()),
            crate::redact::short_digest(first.key.as_bytes()),
        ),
    )
}

/// See [`Assertion::EffectNotRepeated`](crate::Assertion::EffectNotRepeated).
pub(super) fn not_repeated(evidence: &Evidence<'_>) -> Check {
    let expected = "no effect applied again, same tool and arguments, under another key than \
                    the one the conversation's pause applied it under";
    let repeated = evidence
        .ledger_events
        .iter()
        .filter(|e| e.applied)
        .find(|now| {
            now.arguments.is_some()
                && evidence.since_pause.iter().any(|before| {
                    before.applied
                        && before.tool == now.tool
                        && before.arguments == now.arguments
                        && before.key != now.key
                })
        });
    let judged = evidence
        .ledger_events
        .iter()
        .filter(|e| e.applied && e.arguments.is_some())
        .count();
    match repeated {
        Some(event) => Check::new(
            false,
            expected,
            format!(
                "an effect of `{}` with the same arguments (digest {}) was applied again under \
                 key {}, a new key: the paused step ran again",
                tool_label(event.tool.as_deref().unwrap_or_default()),
                event.arguments.as_deref().unwrap_or_default(),
                crate::redact::short_digest(event.key.as_bytes())
            ),
        ),
        None => Check::new(
            true,
            expected,
            format!("{judged} applied effect(s) named their arguments; none repeated one"),
        ),
    }
}

pub(super) fn applied(evidence: &Evidence<'_>, effects: u64) -> Check {
    Check::new(
        evidence.ledger.effects == effects,
        format!("{effects} effect(s) applied, each once"),
        format!(
            "{} applied ({} attempt(s), {} duplicate(s))",
            evidence.ledger.effects, evidence.ledger.attempts, evidence.ledger.duplicates
        ),
    )
}

pub(super) fn fewer_than(evidence: &Evidence<'_>, effects: u64) -> Check {
    Check::new(
        evidence.ledger.effects < effects,
        format!("fewer than {effects} effect(s) applied"),
        format!("{} applied", evidence.ledger.effects),
    )
}

pub(super) fn oracle(evidence: &Evidence<'_>) -> Check {
    let applied = evidence.ledger.effects;
    let expected = format!("the effect oracle counts the ledger's {applied} applied effect(s)");
    match evidence.oracle {
        None => Check::malformed(expected, "no effect oracle ran for this step"),
        Some(Err(why)) => Check::malformed(expected, format!("the effect oracle failed: {why}")),
        Some(Ok(count)) => Check::new(
            *count == applied,
            expected,
            format!("the oracle counts {count} effect(s) in the deployment's store"),
        ),
    }
}

pub(super) fn crash_retried(evidence: &Evidence<'_>) -> Check {
    let expected = "the effect the crash interrupted is retried under its idempotency key";
    match evidence.crash {
        None => Check::malformed(expected, "no crash was injected during the step"),
        Some(crash) => Check::new(
            crash.attempts >= 2,
            expected,
            format!(
                "effect {} (key {}) was attempted {} time(s)",
                crash.effect,
                crate::redact::short_digest(crash.key.as_bytes()),
                crash.attempts
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::assertion::Retries;
    use crate::evidence::TurnRecord;
    use crate::ledger::{LedgerCounts, LedgerEvent};

    fn event(key: &str, applied: bool) -> LedgerEvent {
        LedgerEvent {
            key: key.into(),
            tool: Some("cancel".into()),
            arguments: None,
            applied,
        }
    }

    fn judged(events: &[LedgerEvent], retries: Retries) -> bool {
        let record = TurnRecord::default();
        let evidence = Evidence {
            ledger_events: events,
            ..Evidence::of(&record, LedgerCounts::default())
        };
        let approved = BTreeMap::from([("cancel".to_owned(), 1)]);
        of_one_approval(&evidence, &approved, retries).passed
    }

    fn shared(events: &[LedgerEvent], paused: &[LedgerEvent], retries: Retries) -> (bool, String) {
        let record = TurnRecord::default();
        let trial: Vec<LedgerEvent> = paused.iter().chain(events).cloned().collect();
        let evidence = Evidence {
            ledger_events: events,
            trial_events: &trial,
            since_pause: paused,
            ..Evidence::of(&record, LedgerCounts::default())
        };
        let check = keys_not_shared(&evidence, retries);
        (check.passed, check.observed)
    }

    #[test]
    fn keys_not_shared_exactly_refuses_every_refusal_of_an_uncrashed_run() {
        let with = |key: &str, arguments: Option<&str>, applied| LedgerEvent {
            arguments: arguments.map(str::to_owned),
            ..event(key, applied)
        };
        let (exact, same_key) = (Retries::Exact, Retries::SameKey);
        // Nothing refused: both policies pass.
        let apart = [with("a", Some("x"), true), with("b", Some("y"), true)];
        assert!(shared(&apart, &[], exact).0);
        assert!(shared(&apart, &[], same_key).0);
        // A second effect of the same tool with no arguments under the
        // cancellation's key: nothing in the ledger tells it from a retry,
        // so only the exact policy sees it.
        let notice = [with("a", Some("x"), true), with("a", None, false)];
        let (passed, observed) = shared(&notice, &[], exact);
        assert!(!passed);
        assert!(observed.starts_with("1 attempt(s) refused"), "{observed}");
        assert!(
            observed.contains("`cancel` with no arguments"),
            "{observed}"
        );
        let key = crate::redact::short_digest(b"a");
        assert!(observed.contains(&format!("under key {key}")), "{observed}");
        assert!(shared(&notice, &[], same_key).0);
        // The same effect sent twice under its key: a retry the exact
        // policy has no room for, the same-key policy's very case.
        let twice = [with("a", Some("x"), true), with("a", Some("x"), false)];
        assert!(!shared(&twice, &[], exact).0);
        assert!(shared(&twice, &[], same_key).0);
        // Two effects told apart by their tools or arguments: both.
        let other = LedgerEvent {
            tool: Some("invoice".into()),
            ..with("a", None, false)
        };
        let told_apart = [with("a", Some("x"), true), other];
        for retries in [exact, same_key] {
            let (passed, observed) = shared(&told_apart, &[], retries);
            assert!(!passed);
            assert!(observed.starts_with("two effects share key"), "{observed}");
        }
        let argued = [with("a", Some("x"), true), with("a", Some("y"), false)];
        assert!(!shared(&argued, &[], exact).0);
        assert!(!shared(&argued, &[], same_key).0);
    }

    #[test]
    fn keys_not_shared_lets_a_resume_run_the_paused_step_again() {
        let notice = |key: &str, arguments: &str, applied| LedgerEvent {
            tool: Some("notice".into()),
            arguments: Some(arguments.into()),
            ..event(key, applied)
        };
        // LangGraph runs the paused node from its start: the notice the
        // pause posted goes again under its key, refused.
        let paused = [notice("held", "h", true)];
        let resume = [notice("held", "h", false), event("a", true)];
        assert!(shared(&resume, &paused, Retries::Exact).0);
        // Under the key of the pause's notice, another effect: not the
        // paused step run again.
        let resume = [notice("held", "other", false), event("a", true)];
        assert!(!shared(&resume, &paused, Retries::Exact).0);
        // And only the pause's own effects: a refusal within the resume
        // is not one.
        let resume = [event("a", true), event("a", false)];
        assert!(!shared(&resume, &paused, Retries::Exact).0);
    }

    #[test]
    fn one_approval_carries_out_its_own_request_once() {
        let exact = Retries::Exact;
        // Its own effect, or its own effect found applied before.
        assert!(judged(&[event("a", true)], exact));
        assert!(judged(&[event("a", false)], exact));
        // Nothing carried out, or a second request's effect too.
        assert!(!judged(&[], exact));
        assert!(!judged(&[event("a", true), event("b", true)], exact));
        // A second request carried out under a key already applied is
        // still a second request carried out.
        assert!(!judged(&[event("a", true), event("a", false)], exact));
        // Under a retry policy, a retry that applied nothing is allowed.
        let same_key = Retries::SameKey;
        assert!(judged(&[event("a", true), event("a", false)], same_key));
        assert!(!judged(&[event("a", true), event("b", true)], same_key));
    }

    #[test]
    fn a_request_another_approval_carried_out_may_be_found_done() {
        let approved = BTreeMap::from([("cancel".to_owned(), 1)]);
        let judge = |trial: &[LedgerEvent], paused: &[LedgerEvent]| {
            let record = TurnRecord::default();
            let evidence = Evidence {
                ledger_events: &[],
                trial_events: trial,
                since_pause: paused,
                ..Evidence::of(&record, LedgerCounts::default())
            };
            of_one_approval(&evidence, &approved, Retries::Exact).passed
        };
        // The same request, approved before in another conversation: the
        // desk finds it done and attempts nothing.
        assert!(judge(&[event("a", true)], &[]));
        // Nothing carried out before, or only by the pause this step
        // answers: the approval carried out nothing.
        assert!(!judge(&[], &[]));
        assert!(!judge(&[event("a", true)], &[event("a", true)]));
    }

    #[test]
    fn the_pauses_own_effect_posted_again_under_its_key_is_no_second_request() {
        let exact = Retries::Exact;
        let notice = |key: &str, applied| LedgerEvent {
            tool: Some("notice".into()),
            ..event(key, applied)
        };
        let approved = BTreeMap::from([("cancel".to_owned(), 1), ("notice".to_owned(), 1)]);
        let judge = |paused: &[LedgerEvent], events: &[LedgerEvent]| {
            let record = TurnRecord::default();
            let evidence = Evidence {
                ledger_events: events,
                since_pause: paused,
                ..Evidence::of(&record, LedgerCounts::default())
            };
            of_one_approval(&evidence, &approved, exact).passed
        };
        // The pause's notice run again under its key (refused), the
        // approval's effect and its own notice: one request.
        let resume = [notice("held", false), event("a", true), notice("ran", true)];
        assert!(judge(&[notice("held", true)], &resume));
        // Unless the pause applied it, the refused notice is one more
        // attempt than one approval makes.
        assert!(!judge(&[], &resume));
        // A key the pause applied with other arguments is another effect.
        let with = |arguments: &str, applied| LedgerEvent {
            arguments: Some(arguments.into()),
            ..notice("held", applied)
        };
        let resume = [with("b", false), event("a", true), notice("ran", true)];
        assert!(!judge(&[with("a", true)], &resume));
    }
}
