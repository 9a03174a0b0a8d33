//! The exactly-once pack's second request: a distinct request after the
//! first and a restart must apply every effect it applies alone.
//!
//! Keys drawn from something that restarts with the process (a counter, a
//! sequence kept in memory) collide with the first request's and lose the
//! second's effects; a key that names only the customer collides the same
//! way. The experiment needs a second request. `second_prompt` gives it;
//! without it the pack derives one from `prompt` by moving every number in
//! it on by one ("customer 42" becomes "customer 43"): the same request
//! about a neighbouring subject. A derived request is judged only when it
//! is of the prompt's shape (run alone from fresh fixtures it completes,
//! pauses when the pack resumes, and applies at least one effect through
//! the ledger); otherwise the trial says why it was left out, and a correct
//! deployment is never failed on a request nobody wrote.

use super::scenario::CrashEverywhere;
use super::ExactlyOncePack;
use crate::runner::{Session, StepErrorKind};
use crate::scenario::Step;

/// Where the second request came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SecondRequest {
    /// `second_prompt`, as the adopter wrote it.
    Given(String),
    /// `prompt` with every number moved on by one.
    Derived(String),
}

impl SecondRequest {
    fn prompt(&self) -> &str {
        match self {
            Self::Given(prompt) | Self::Derived(prompt) => prompt,
        }
    }
}

impl ExactlyOncePack {
    /// The second request: `second_prompt`, or else `prompt` with every
    /// number moved on by one; `None` when neither exists.
    pub(crate) fn second_request(&self) -> Option<SecondRequest> {
        match &self.second_prompt {
            Some(given) => Some(SecondRequest::Given(given.clone())),
            None => neighbouring_request(&self.prompt).map(SecondRequest::Derived),
        }
    }
}

/// `prompt` with every run of ASCII digits moved on by one, its width kept
/// when it had leading zeros (`order 007` becomes `order 008`, `9` becomes
/// `10`); `None` when the prompt holds no number to move, or one too long
/// to be a subject's id.
pub(crate) fn neighbouring_request(prompt: &str) -> Option<String> {
    let mut out = String::with_capacity(prompt.len() + 2);
    let mut moved = false;
    let mut rest = prompt;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..start]);
        let digits = &rest[start..];
        let len = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        let number: u64 = digits[..len].parse().ok()?;
        let next = (number + 1).to_string();
        let width = if digits.starts_with('0') { len } else { 0 };
        out.push_str(&format!("{next:0>width$}"));
        moved = true;
        rest = &digits[len..];
    }
    out.push_str(rest);
    moved.then_some(out)
}

impl CrashEverywhere {
    /// The second request alone (to learn its effects), then from fresh
    /// fixtures the first request, a restart, and the second: it must apply
    /// all of its own effects on top of the first's.
    pub(super) fn second_request_after_a_restart(
        &self,
        session: &mut Session<'_>,
        second: &SecondRequest,
        first: u64,
    ) {
        let pack = &self.pack;
        let prompt = second.prompt();
        let request = |label: &str, restart: bool| {
            let mut steps = vec![pack.request_step(label, prompt).restarting(restart)];
            steps.extend(pack.resume_step(&format!("{label} resumed")));
            steps
        };
        let alone = match second {
            SecondRequest::Given(_) => {
                if !self.experiment(session, request("second request alone", false)) {
                    return;
                }
                let alone = session.steps().last().map_or(0, |step| step.ledger.effects);
                if alone == 0 {
                    session.fail(
                        "second request alone",
                        StepErrorKind::MalformedEvidence,
                        "`second_prompt` applies at least one effect through the ledger",
                        "it applied none, so there is nothing of its own to lose".into(),
                    );
                    return;
                }
                alone
            }
            SecondRequest::Derived(prompt) => match derived_alone(session, pack, prompt) {
                Some(alone) => alone,
                None => return,
            },
        };
        let mut steps = vec![pack.prompt_step("first request")];
        steps.extend(pack.resume_step("first request resumed"));
        let mut after = request("second request after a restart", true);
        if let Some(last) = after.last_mut() {
            last.assertions.push(Self::same_effects(first + alone));
        }
        steps.extend(after);
        self.experiment(session, steps);
    }
}

/// The derived request run alone from fresh fixtures, each step taking a
/// record or an error alike (a request nobody wrote may be refused): its
/// applied effects when it is of the prompt's shape (no error, a pause
/// where the pack resumes, an effect through the ledger), else `None` with
/// a note saying why it was left out.
fn derived_alone(session: &mut Session<'_>, pack: &ExactlyOncePack, prompt: &str) -> Option<u64> {
    if !session.reset("second request alone") {
        return None;
    }
    let mut request = Step::prompt("second request alone", prompt, &pack.conversation);
    if let Some(state) = &pack.state {
        request = request.with_state(state.clone());
    }
    let mut steps = vec![request.record_or_any_error()];
    steps.extend(
        pack.resume_step("second request alone resumed")
            .map(Step::record_or_any_error),
    );
    let mut effects = 0;
    for (index, step) in steps.iter().enumerate() {
        let run = session.run(step)?;
        let refused = run.assertions.iter().any(|a| a.kind == "RecordOrAnyError");
        let unpaused = index == 0
            && pack.answer.is_some()
            && session.last_record().and_then(|r| r.pause()).is_none();
        if run.error.is_some() || refused || unpaused {
            session.note(
                "no second request: `second_prompt` was not given, and `prompt` with its numbers \
                 moved on by one, run alone, did not complete as `prompt` does (an error, or no \
                 pause to resume); give `second_prompt` to run the second-request experiment",
            );
            return None;
        }
        effects = run.ledger.effects;
    }
    if effects == 0 {
        session.note(
            "no second request: `second_prompt` was not given, and `prompt` with its numbers \
             moved on by one, run alone, applied no effect through the ledger; give \
             `second_prompt` to run the second-request experiment",
        );
        return None;
    }
    session.note(
        "second request derived: `prompt` with its numbers moved on by one (give \
         `second_prompt` to choose it)",
    );
    Some(effects)
}

#[cfg(test)]
mod tests {
    use super::neighbouring_request;

    #[test]
    fn a_neighbouring_request_moves_every_number_on_by_one() {
        assert_eq!(
            neighbouring_request("cancel the subscription of customer 42").as_deref(),
            Some("cancel the subscription of customer 43")
        );
        assert_eq!(
            neighbouring_request("refund 2 items of order 009").as_deref(),
            Some("refund 3 items of order 010")
        );
        assert_eq!(
            neighbouring_request("order 99").as_deref(),
            Some("order 100")
        );
        assert_eq!(neighbouring_request("cancel my subscription"), None);
        assert_eq!(neighbouring_request("id 99999999999999999999999"), None);
    }
}
