//! What the seed's approving resume carried out, learned from the ledger:
//! the probes that vary the seed compare their own resumes with it.

use crate::runner::Session;

/// The applied effects, per tool, of the trial's first resume (its second
/// step, answering the first): the effects one approval carries out.
/// `None` when it applied none through the ledger.
pub(super) fn resume_effects(
    session: &Session<'_>,
) -> Option<std::collections::BTreeMap<String, u64>> {
    let approved = crate::ledger::applied_by_tool(&resume_events(session));
    (!approved.is_empty()).then_some(approved)
}

/// The ledger attempts of the trial's first resume (its second step).
pub(super) fn resume_events(session: &Session<'_>) -> Vec<crate::ledger::LedgerEvent> {
    let steps = session.steps();
    let (Some(paused), Some(resumed)) = (steps.first(), steps.get(1)) else {
        return Vec::new();
    };
    let from = usize::try_from(paused.ledger.attempts).unwrap_or(usize::MAX);
    let to = usize::try_from(resumed.ledger.attempts).unwrap_or(usize::MAX);
    let mut events = session.context().ledger().events_since(from);
    events.truncate(to.saturating_sub(from));
    events
}
