//! A pack's contract as a table: for each scenario, each step's request
//! (operation, role, conversation, state, restarts, crashes) and everything
//! the evidence must show, with the exact JSON the pack expects. Printed
//! before a run with `SYMFONIC_EVALS_EXPLAIN=1`, and what the docs' tables
//! are made of.
//!
//! Prompts, states and answers are what the pack sends: turn content, so
//! they are digested like everything else unless
//! `SYMFONIC_EVALS_SHOW_VALUES` asks otherwise.

use std::fmt::Write as _;

use super::PackDefinition;
use crate::assertion::{Assertion, Evidence};
use crate::evidence::{ReviewAction, Role, TurnRecord};
use crate::ledger::LedgerCounts;
use crate::redact::{sensitive, shape, PublicValues};
use crate::scenario::{
    Expect, QuestionSource, Restart, Scenario, ScenarioKind, Step, StepInput, TokenSource,
};

/// Prints a pack's explanation before it runs when set (to anything but
/// empty, `0` or `false`).
pub const EXPLAIN_ENV: &str = "SYMFONIC_EVALS_EXPLAIN";

/// Whether [`EXPLAIN_ENV`] asks for explanations.
pub(crate) fn explaining() -> bool {
    std::env::var(EXPLAIN_ENV).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

impl Assertion {
    /// What the assertion requires, in full: the same words a failure's
    /// "expected" uses, with the pack's own values.
    pub fn requirement(&self) -> String {
        let empty = TurnRecord::default();
        self.check(&Evidence::of(&empty, LedgerCounts::default()))
            .expected
    }
}

fn request(step: &Step) -> String {
    let role = match step.role {
        Role::User => "",
        Role::Operator => " as the operator",
    };
    let what = match &step.input {
        StepInput::Prompt(prompt) => format!("prompt {}", sensitive(prompt)),
        StepInput::Reset => "reset the conversation (the `reset` operation)".to_owned(),
        StepInput::Review(action) => {
            let rule = match action {
                ReviewAction::Approve { precondition, .. }
                | ReviewAction::Amend { precondition, .. } => format!(
                    " with {} predicate(s) {}",
                    precondition.len(),
                    sensitive(&serde_json::to_string(precondition).unwrap_or_default())
                ),
                ReviewAction::Revoke { .. } | ReviewAction::Reject { .. } => String::new(),
            };
            format!(
                "review door: {} `{}`{rule}",
                action.verb(),
                action.procedure()
            )
        }
        StepInput::Resume {
            answer,
            token,
            question,
        } => {
            let token = match token {
                TokenSource::Own => "the conversation's own token".to_owned(),
                TokenSource::Conversation(other) => format!("the token retained in `{other}`"),
                TokenSource::Forged(how) => how.describe().to_owned(),
                TokenSource::Guessed(other) => {
                    format!("the next token guessed from the one retained in `{other}`")
                }
                TokenSource::Step(label) => format!("the token of the pause `{label}` ended in"),
            };
            let question = match question {
                QuestionSource::Genuine => "",
                QuestionSource::Forged => ", a forged question id",
            };
            format!(
                "resume with answer {} presenting {token}{question}",
                shape(answer, &PublicValues::default())
            )
        }
    };
    let mut text = format!("{what}{role} in `{}`", step.conversation);
    if let Some(feedback) = step.feedback {
        let _ = write!(text, ", marked {} by a reviewer", feedback.as_str());
    }
    if step.instance > 0 {
        text.push_str(", on the second instance");
    }
    if let Some(by) = step.clock_jump {
        let _ = write!(text, ", the clock moved {} s forward", by.as_secs());
    }
    if step.fixture_error {
        text.push_str(", the MCP fixture answering its calls with a tool error");
    }
    if let Some(state) = &step.state {
        let _ = write!(text, ", state {}", shape(state, &PublicValues::default()));
    }
    match step.restart {
        Restart::No => {}
        Restart::Before => text.push_str(", after a restart"),
        Restart::CrashBefore => text.push_str(", after a crash"),
        Restart::KillBefore => text.push_str(", after a restart (a child process killed)"),
    }
    if let Some(k) = step.crash_at_effect {
        let _ = write!(
            text,
            ", killed right after its effect {k} is granted, then restarted and retried"
        );
    }
    text
}

/// One scenario as a table.
pub fn explain_scenario(scenario: &Scenario) -> String {
    let kind = match scenario.kind {
        ScenarioKind::Seed => "seed",
        ScenarioKind::Probe => "probe",
    };
    let mut out = format!(
        "{kind} {} ({} trial(s), {} required)\n",
        scenario.name, scenario.policy.trials, scenario.policy.required
    );
    for (i, step) in scenario.steps.iter().enumerate() {
        let _ = writeln!(out, "  step {} `{}`: {}", i + 1, step.label, request(step));
        if let Expect::Error(errors) = &step.expect {
            let _ = writeln!(out, "      - fails with {}", errors.describe());
        }
        for assertion in &step.assertions {
            let _ = writeln!(out, "      - {}", assertion.requirement());
        }
        if step.assertions.is_empty() && step.expect == Expect::Record {
            let _ = writeln!(out, "      - returns a turn record");
        }
    }
    if let Some(tail) = &scenario.tail {
        let _ = writeln!(out, "  then: {}", tail.0.describe());
    }
    out
}

impl PackDefinition {
    /// Every scenario the pack runs, as tables (see [`explain_scenario`]).
    ///
    /// ```
    /// use symfonic_evals::{ExtensionToolPack, PackDefinition};
    /// let pack = PackDefinition::ExtensionTool(ExtensionToolPack {
    ///     prompt: "where is parcel 7?".into(),
    ///     tool_name: "track_shipment".into(),
    ///     ..Default::default()
    /// });
    /// let table = pack.explain();
    /// assert!(table.starts_with("pack extension-tools\n"));
    /// assert!(table.contains("1 successful call(s) of track_shipment"));
    /// ```
    pub fn explain(&self) -> String {
        let mut out = format!("pack {}\n", self.kind().name());
        for scenario in self.scenarios() {
            out.push_str(&explain_scenario(&scenario));
        }
        out
    }
}
