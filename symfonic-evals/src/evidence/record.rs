//! What a deployment reports about one turn it ran.
//!
//! Every pack assertion reads this record, never the wording of the answer, so
//! the record is built through [`TurnRecordBuilder`]: a target says what it
//! did in the vocabulary the packs read, and cannot forget a field the packs
//! rely on.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::governance::StageRecord;
use super::tool_call::{ResolvedCall, ToolCall};

/// Attribute names whose values come from the terminal event, not from the
/// deployment's attribute map. A deployment that sets `paused` by hand while
/// its turn completed must not look paused.
pub const PAUSE_FACTS: [&str; 3] = [PAUSED, PAUSE_NAME, PAUSE_RESUMABLE];
/// Whether the turn ended paused.
pub const PAUSED: &str = "paused";
/// The interaction that paused it.
pub const PAUSE_NAME: &str = "pause_name";
/// Whether the pause reached a checkpoint.
pub const PAUSE_RESUMABLE: &str = "pause_resumable";

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Terminal {
    /// The turn ran to its answer.
    #[default]
    Completed,
    /// The turn stopped for a person.
    Paused(Pause),
}

/// A turn that stopped to ask a person something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pause {
    /// The registered interaction that paused the turn (for example `ask_user`).
    pub interaction: String,
    /// Whether the stopped turn reached a checkpoint a redemption can rebuild.
    pub resumable: bool,
    /// The single-use token a person redeems to resume.
    pub token: String,
    /// The question the deployment asked, as JSON, when it publishes one.
    /// Turn content: reports only ever show its digest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<serde_json::Value>,
    /// The id the deployment gave that question; the harness keeps it with
    /// the token and hands it back on the resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question_id: Option<String>,
    /// Ids of the calls this pause holds pending (reported in the record's
    /// tool calls) that the person answering may edit before they run, as a
    /// human-in-the-loop middleware's `edit` decision does. A deployment
    /// that names them declares the
    /// [`EDITABLE_CALLS`](crate::EDITABLE_CALLS) trait and takes the edit
    /// answer (see [`crate::EditDecision`]); the `approval/edited-call`
    /// probe then checks the edit is what runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub editable: Vec<String>,
    /// Who may answer this pause, when the deployment publishes it: an
    /// answer from anyone else must carry nothing out. The approval pack
    /// derives its foreign answer from it (see [`Approvers`]). Boxed, so a
    /// record that publishes none carries no room for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvers: Option<Box<Approvers>>,
}

/// Who may answer a pause, as the deployment's answer schema names them:
/// the answer's field that says who gives it (`approver`), and every name
/// entitled to stand there. Published on the pause, it lets the approval
/// pack send a well-formed answer from someone outside the list without
/// being told how the schema spells an approver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approvers {
    /// The answer's top-level field naming who gives it.
    pub field: String,
    /// Every name entitled to give it (several people may be).
    pub names: Vec<String>,
}

impl Approvers {
    /// A name not on the list, for an answer from someone not entitled:
    /// `someone-else`, with a number after it while that is taken.
    pub fn outsider(&self) -> String {
        let taken = |name: &str| self.names.iter().any(|n| n == name);
        let mut name = "someone-else".to_owned();
        let mut n = 1;
        while taken(&name) {
            n += 1;
            name = format!("someone-else-{n}");
        }
        name
    }
}

impl Pause {
    /// A pause of `interaction`, redeemable with `token`.
    pub fn new(interaction: impl Into<String>, resumable: bool, token: impl Into<String>) -> Self {
        Self {
            interaction: interaction.into(),
            resumable,
            token: token.into(),
            question: None,
            question_id: None,
            editable: Vec::new(),
            approvers: None,
        }
    }

    /// The same pause, publishing the question asked and its id.
    #[must_use]
    pub fn asking(mut self, question: serde_json::Value, id: impl Into<String>) -> Self {
        self.question = Some(question);
        self.question_id = Some(id.into());
        self
    }

    /// The same pause, publishing who may answer it: the answer's `field`
    /// naming who gives it, and the `names` entitled to.
    #[must_use]
    pub fn answered_by(
        mut self,
        field: impl Into<String>,
        names: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.approvers = Some(Box::new(Approvers {
            field: field.into(),
            names: names.into_iter().map(Into::into).collect(),
        }));
        self
    }

    /// The same pause, declaring the held calls `ids` editable by the
    /// person answering.
    #[must_use]
    pub fn editing(mut self, ids: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.editable = ids.into_iter().map(Into::into).collect();
        self
    }
}

/// The evidence one turn left behind. Built with [`TurnRecord::builder`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TurnRecord {
    answer: String,
    #[serde(default)]
    terminal: Terminal,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    resolved: Vec<ResolvedCall>,
    #[serde(default)]
    model_input: String,
    #[serde(default)]
    governance: Vec<StageRecord>,
    #[serde(default)]
    attributes: BTreeMap<String, Value>,
}

impl TurnRecord {
    /// Starts a record; see [`TurnRecordBuilder`].
    pub fn builder() -> TurnRecordBuilder {
        TurnRecordBuilder::default()
    }

    /// The answer text (never asserted on except by `ResponseContains`).
    pub fn answer(&self) -> &str {
        &self.answer
    }

    /// How the turn ended.
    pub fn terminal(&self) -> &Terminal {
        &self.terminal
    }

    /// The pause, when the turn ended in one.
    pub fn pause(&self) -> Option<&Pause> {
        match &self.terminal {
            Terminal::Paused(pause) => Some(pause),
            Terminal::Completed => None,
        }
    }

    /// Every tool call the turn made, in order.
    pub fn tool_calls(&self) -> &[ToolCall] {
        &self.tool_calls
    }

    /// Calls parked by an earlier pause that this turn resolved.
    pub fn resolved(&self) -> &[ResolvedCall] {
        &self.resolved
    }

    /// The text the model was shown, recall block included.
    pub fn model_input(&self) -> &str {
        &self.model_input
    }

    /// Each governance stage's answer during the turn.
    pub fn governance(&self) -> &[StageRecord] {
        &self.governance
    }

    /// The attributes exactly as the deployment set them.
    pub fn attributes(&self) -> &BTreeMap<String, Value> {
        &self.attributes
    }

    /// Every JSON value the record holds, moved out (for taking an over-deep
    /// record apart without recursion).
    pub(crate) fn into_values(self) -> Vec<Value> {
        let mut values: Vec<Value> = self.attributes.into_values().collect();
        for call in self.tool_calls {
            values.push(call.arguments);
            if let super::tool_call::ToolOutcome::Succeeded { result } = call.outcome {
                values.push(result);
            }
        }
        for resolved in self.resolved {
            values.extend(resolved.arguments);
            if let super::tool_call::ToolOutcome::Succeeded { result } = resolved.outcome {
                values.push(result);
            }
        }
        if let Terminal::Paused(pause) = self.terminal {
            values.extend(pause.question);
        }
        values
    }

    /// The value an assertion reads under `name`.
    ///
    /// The pause facts in [`PAUSE_FACTS`] are derived from the terminal event
    /// and shadow any attribute of the same name; everything else is looked up
    /// in the deployment's attributes.
    pub fn fact(&self, name: &str) -> Option<Value> {
        match name {
            PAUSED => Some(Value::Bool(self.pause().is_some())),
            PAUSE_NAME => self.pause().map(|p| Value::String(p.interaction.clone())),
            PAUSE_RESUMABLE => self.pause().map(|p| Value::Bool(p.resumable)),
            _ => self.attributes.get(name).cloned(),
        }
    }
}

/// Builds a [`TurnRecord`] one fact at a time.
///
/// ```
/// use symfonic_evals::{Pause, StageOutcome, StageRecord, ToolCall, TurnRecord};
/// let record = TurnRecord::builder()
///     .answer("refund issued")
///     .model_input("system: ... recall: verify the account region")
///     .tool_call(ToolCall::succeeded("c1", "issue_refund", serde_json::json!({"order": 3}), serde_json::json!("ok")))
///     .stage(StageRecord::new("procedural_precondition", StageOutcome::Passed).count("checked", 1))
///     .attribute("procedural_promoted", 1)
///     .build();
/// assert_eq!(record.tool_calls().len(), 1);
/// let paused = TurnRecord::builder().paused(Pause::new("ask_user", true, "tok-1")).build();
/// assert_eq!(paused.fact("paused"), Some(serde_json::json!(true)));
/// ```
#[derive(Debug, Default, Clone)]
#[must_use]
pub struct TurnRecordBuilder {
    record: TurnRecord,
}

impl TurnRecordBuilder {
    /// Sets the answer text.
    pub fn answer(mut self, answer: impl Into<String>) -> Self {
        self.record.answer = answer.into();
        self
    }

    /// Sets the text the model was shown.
    pub fn model_input(mut self, input: impl Into<String>) -> Self {
        self.record.model_input = input.into();
        self
    }

    /// Marks the turn as paused for a person.
    pub fn paused(mut self, pause: Pause) -> Self {
        self.record.terminal = Terminal::Paused(pause);
        self
    }

    /// Appends one tool call.
    pub fn tool_call(mut self, call: ToolCall) -> Self {
        self.record.tool_calls.push(call);
        self
    }

    /// Appends several tool calls.
    pub fn tool_calls(mut self, calls: impl IntoIterator<Item = ToolCall>) -> Self {
        self.record.tool_calls.extend(calls);
        self
    }

    /// Reports that this turn (a resume) resolved the call an earlier pause
    /// left pending.
    pub fn resolved(mut self, call: ResolvedCall) -> Self {
        self.record.resolved.push(call);
        self
    }

    /// Appends one governance stage's answer.
    pub fn stage(mut self, stage: StageRecord) -> Self {
        self.record.governance.push(stage);
        self
    }

    /// Appends a whole governance trace.
    pub fn stages(mut self, stages: impl IntoIterator<Item = StageRecord>) -> Self {
        self.record.governance.extend(stages);
        self
    }

    /// Publishes a value the deployment read back out of its own store.
    ///
    /// # Panics
    ///
    /// When `value` cannot be represented as JSON (a map with non-string keys):
    /// that is a bug in the target, not a turn outcome.
    pub fn attribute(mut self, name: impl Into<String>, value: impl Serialize) -> Self {
        let value = serde_json::to_value(value).expect("attribute values must serialize to JSON");
        self.record.attributes.insert(name.into(), value);
        self
    }

    /// Finishes the record.
    pub fn build(self) -> TurnRecord {
        self.record
    }
}
