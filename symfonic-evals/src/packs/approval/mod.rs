//! The approval and resume pack: pause for a person, resume once, refuse the
//! replay; and its probes (restarts at every boundary, forged and foreign
//! tokens, two conversations, the gated action, a denial, an unfit answer,
//! an amended answer, an edited call, a reset between pause and resume).

mod edited;
mod kept;
mod learned;
mod one_of_two;
mod reset;
mod scenarios;
pub(crate) mod tokens;

pub use scenarios::SEED;

use serde_json::Value;

use super::arguments::ArgumentChecks;
use super::probes::Probe;
use super::{ArgumentError, PackKind};
use crate::assertion::Retries;
use crate::capability::Requirements;
use crate::scenario::TrialPolicy;

/// The probes of the approval pack, in the order they run.
pub const PROBES: &[Probe] = &[
    Probe::default_on(
        "approval/restart-between-pause-and-resume",
        "a checkpoint or token held only in process memory: the resume after a real restart \
         finds nothing to continue",
    ),
    Probe::default_on(
        "approval/restart-before-replay",
        "a spent mark held only in memory: after a restart the replayed token redeems again",
    ),
    Probe::default_on(
        "approval/crash-inside-resume",
        "a token spent, or an effect keyed, so that a resume killed right after its first \
         effect cannot be retried: the retry with the same token must finish the turn without \
         applying anything twice",
    ),
    Probe::default_on(
        "approval/forged-token",
        "a token that is never checked: a forgery of the same shape redeems, or spends the \
         genuine one",
    ),
    Probe::default_on(
        "approval/token-bound-to-conversation",
        "any conversation may redeem any token: the genuine token presented under another \
         conversation is accepted",
    ),
    Probe::default_on(
        "approval/two-conversations",
        "one pending pause per deployment: a second conversation's pause gets the same token \
         or overwrites the first one's checkpoint",
    ),
    Probe::default_on(
        "approval/token-predictable",
        "tokens that can be worked out from earlier ones (numbered one after another, a counter \
         in hex, a timestamp): of three pauses in three conversations, a later token is an \
         earlier one with a number moved on by a little, or the next token guessed from the \
         second redeems the third pause",
    ),
    Probe::default_on(
        "approval/second-request",
        "an approval that grants more than the request it answered: after an approved resume, \
         the same request again, in the same conversation and in a fresh one, is carried out \
         without asking (an approval remembered per conversation or per requester)",
    ),
    Probe::default_on(
        "approval/one-of-two",
        "an approval that grants every request pending beside it: of two requests paused in two \
         conversations (and, where the deployment declares `concurrent-pauses`, two in one \
         conversation), the approval of one carries out both (applies more than one approval's \
         effects), or the other finds nothing left to resume",
    ),
    Probe::default_on(
        "approval/foreign-answer",
        "an answer accepted from anyone: a well-formed approval from a person not entitled to \
         give it (`foreign_answer`, or derived from the approvers the pause publishes) carries \
         the request out, or spends the token so the entitled person's answer is refused",
    ),
    Probe::default_on(
        "approval/pending-call-resolved",
        "a pause that misstates the parked call (reported as a success) or a resume that never \
         settles it",
    ),
    Probe::default_on(
        "approval/question-id-checked",
        "a redemption that ignores the question id it published: a forged id is accepted",
    ),
    Probe::enabled_by(
        "approval/gated-action",
        "gated_tool",
        "a gated action run before the person answered, or never run after the approval",
    ),
    Probe::default_on(
        "approval/deny-answer",
        "an answer that is never read, or an action run before it: a denial performs the gated \
         action anyway, or leaves as many effects as the approval (`deny_answer`, or `answer` \
         with its one boolean flipped)",
    ),
    Probe::default_on(
        "approval/unfit-answer",
        "an answer that is never validated, or a token spent before the answer was: an unfit \
         answer is accepted, or burns the token so the fitting one fails (`unfit_answer`, or \
         `answer` with every leaf of another type)",
    ),
    Probe::default_on(
        "approval/type-confused-answer",
        "an answer coerced rather than validated: `\"true\"`, `1` or `\"yes\"` for the deciding \
         `true` is accepted as the value it resembles (a lax validator such as pydantic's \
         default mode does this; validate strictly, or skip the probe)",
    ),
    Probe::enabled_by(
        "approval/amended-answer",
        "amended_answer",
        "an amended answer read only for its decision: the person approves with a change and \
         the deployment runs the original request",
    ),
    Probe::on_declaring(
        "approval/edited-call",
        crate::capability::EDITABLE_CALLS,
        "an edit read only as an approval: the person edits the held call (one argument \
         changed) and the deployment runs the call as the model asked for it",
    ),
    Probe::on_declaring(
        "approval/replicas",
        crate::capability::REPLICAS,
        "a spent mark one instance keeps to itself (a cache of spent tokens loaded at start-up): \
         the pause on one instance, the resume on a second on the same durable directory, and \
         the replay refused on both",
    ),
    Probe::on_declaring(
        "approval/reset-between",
        crate::capability::RESET,
        "a reset that clears the transcript only: after the conversation is reset (or the \
         request cancelled) through the declared `reset` operation, the token issued before it \
         still redeems, or a fresh prompt in the same conversation no longer pauses",
    ),
];

/// Arguments of the approval and resume pack. `Default` fills the optional
/// arguments with their documented defaults.
///
#[doc = include_str!("../../../docs/approval_resume.md")]
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalResumePack {
    /// The turn that must pause.
    pub pause_prompt: String,
    /// What the person answers; the deployment validates it.
    pub answer: Value,
    /// The registered interaction that pauses (no default: it is the one under test).
    pub interaction_tool: String,
    /// What the deployment claims its pause is; continuation follows it.
    pub resumable: bool,
    /// Where the deployment publishes the redemption's outcome.
    pub resume_attribute: String,
    /// The outcome a successful redemption reports.
    pub resume_outcome: String,
    /// Where it publishes whether the paused turn was continued.
    pub continued_attribute: String,
    /// Where it publishes whether the token was bound to a checkpoint.
    pub checkpoint_attribute: String,
    /// The kinds or codes a replayed token may fail with (any one of them).
    #[serde(deserialize_with = "super::serde_forms::one_or_many")]
    pub replay_error: Vec<String>,
    /// The conversation every seed step runs in (probes derive theirs from it).
    pub conversation: String,
    /// The action the pause gates: it must not run before the answer, and
    /// must run exactly once after an approving one. It may be the
    /// interaction itself, when the approval sits on the gated call (the
    /// pause is that call, pending): approval then runs it once, a denial
    /// resolves it without running it.
    pub gated_tool: Option<String>,
    /// How retries of the gated action's effect are counted: `exact` (the
    /// default) or `same_key`, accepting a retry under the applied key
    /// that applied nothing twice.
    pub retries: Retries,
    /// An answer that denies: the gated action must never run on it.
    pub deny_answer: Option<Value>,
    /// An answer the deployment must reject: the resume fails, the token
    /// stays unspent, and the fitting answer then succeeds.
    pub unfit_answer: Option<Value>,
    /// A well-formed approving answer from someone not entitled to give
    /// it, spelled as the deployment's answer schema names the approver
    /// (`{"approved": true, "approver": "intern"}`): it must be treated
    /// like a denial that leaves the token unspent, so the entitled
    /// person's answer then carries the request out. Without it, the
    /// probe derives one from the approvers the pause publishes
    /// ([`Pause::answered_by`](crate::Pause::answered_by)).
    pub foreign_answer: Option<Value>,
    /// An approval that changes the request (`{"approved": true,
    /// "amount": 180}`), as a person amends what they approve: the call
    /// the resume runs must carry the change (`amended_call`), never the
    /// original arguments.
    pub amended_answer: Option<Value>,
    /// The arguments the call run on `amended_answer` must carry (compared
    /// as a subset: `{"amount": 180}`), of `gated_tool` when it is given.
    pub amended_call: Option<Value>,
    /// A second request of the same kind as `pause_prompt` on another
    /// subject (`cancel the subscription of customer 43`), its gated
    /// effects under keys of their own. On a deployment declaring
    /// [`CONCURRENT_PAUSES`](crate::CONCURRENT_PAUSES), `approval/one-of-two`
    /// also pauses it beside `pause_prompt` in one conversation. Not
    /// derived: `pause_prompt` twice may rightly share its effect's key
    /// (the same subscription is cancelled once), so one approval's effects
    /// could not be told from two.
    pub second_prompt: Option<String>,
    /// Probes to switch off, by name (see [`PackKind::probes`](super::PackKind::probes)).
    pub skip_probes: Vec<String>,
    /// Trials and passes required (not read from JSON: a policy holds a
    /// duration, which the attribute spells as `step_timeout_ms`).
    #[serde(skip)]
    pub policy: TrialPolicy,
}

impl Default for ApprovalResumePack {
    fn default() -> Self {
        Self {
            pause_prompt: String::new(),
            answer: Value::Null,
            interaction_tool: String::new(),
            resumable: true,
            resume_attribute: "resume_outcome".into(),
            resume_outcome: "resumed".into(),
            continued_attribute: "resume_continued".into(),
            checkpoint_attribute: "resume_checkpoint".into(),
            replay_error: vec!["PauseTokenReplayedError".into()],
            conversation: "approval".into(),
            gated_tool: None,
            retries: Retries::Exact,
            deny_answer: None,
            unfit_answer: None,
            foreign_answer: None,
            amended_answer: None,
            amended_call: None,
            second_prompt: None,
            skip_probes: Vec::new(),
            policy: TrialPolicy::default(),
        }
    }
}

impl ApprovalResumePack {
    /// Refuses arguments that would make the pack unable to discriminate.
    ///
    /// # Errors
    ///
    /// Every offending argument.
    pub fn check(&self) -> Result<(), Vec<ArgumentError>> {
        let mut checks = ArgumentChecks::default();
        checks.text("pause_prompt", &self.pause_prompt);
        checks.text("interaction_tool", &self.interaction_tool);
        // A person's answer is a mapping of fields, as the attribute requires.
        checks.require(
            is_answer(&self.answer),
            "answer",
            "must be a non-empty JSON object: redeeming a token with nothing to validate \
             proves only that it was spent",
        );
        for (argument, value) in [
            ("resume_attribute", &self.resume_attribute),
            ("resume_outcome", &self.resume_outcome),
            ("continued_attribute", &self.continued_attribute),
            ("checkpoint_attribute", &self.checkpoint_attribute),
            ("conversation", &self.conversation),
        ] {
            checks.text(argument, value);
        }
        checks.require(
            !self.replay_error.is_empty() && self.replay_error.iter().all(|k| !k.is_empty()),
            "replay_error",
            "names the error kinds or codes a replay may fail with, and an empty one names none",
        );
        checks.optional_text("gated_tool", self.gated_tool.as_ref());
        if let Some(deny) = &self.deny_answer {
            checks.require(
                is_answer(deny),
                "deny_answer",
                "must be a non-empty JSON object, the answer a person gives to say no",
            );
            checks.require(
                *deny != self.answer,
                "deny_answer",
                "equals `answer`, so the denial would be the approval",
            );
        }
        if let Some(foreign) = &self.foreign_answer {
            checks.require(
                is_answer(foreign),
                "foreign_answer",
                "must be a non-empty JSON object, an answer as the deployment's schema spells it",
            );
            checks.require(
                *foreign != self.answer,
                "foreign_answer",
                "equals `answer`, so the person not entitled would be the one who is",
            );
        }
        if let Some(amended) = &self.amended_answer {
            checks.require(
                is_answer(amended) && *amended != self.answer,
                "amended_answer",
                "must be a non-empty JSON object other than `answer`: the approval with the \
                 person's change",
            );
        }
        checks.require(
            self.amended_call.as_ref().is_none_or(is_answer),
            "amended_call",
            "must be a non-empty JSON object, the arguments the amended call carries",
        );
        checks.require(
            self.amended_answer.is_some() == self.amended_call.is_some(),
            if self.amended_answer.is_some() {
                "amended_answer"
            } else {
                "amended_call"
            },
            "comes with its other half: `amended_answer` is the change, `amended_call` what \
             the call must carry after it",
        );
        if let Some(unfit) = &self.unfit_answer {
            checks.require(
                unfit.is_object(),
                "unfit_answer",
                "must be a JSON object the deployment's answer schema rejects",
            );
            checks.require(
                *unfit != self.answer,
                "unfit_answer",
                "equals `answer`, so the answer that must be rejected is the one that must fit",
            );
        }
        checks.optional_text("second_prompt", self.second_prompt.as_ref());
        checks.require(
            self.second_prompt.as_deref() != Some(self.pause_prompt.as_str()),
            "second_prompt",
            "equals `pause_prompt`: the same request twice may share its effect's key, so the \
             second request must name another subject",
        );
        checks.probes(&self.skip_probes, PROBES);
        checks.policy(&self.policy);
        checks.finish()
    }

    /// The answer the unfit-answer probe sends: `unfit_answer`, or else
    /// `answer` with every leaf made a value of another type (a boolean the
    /// string `"maybe"`, a number or null a string, a string a number), which
    /// no answer schema that asked for `answer`'s shape admits. `None` when
    /// `answer` has no leaf to change.
    pub fn unfit(&self) -> Option<Value> {
        if let Some(unfit) = &self.unfit_answer {
            return Some(unfit.clone());
        }
        let retyped = retyped(&self.answer);
        (retyped != self.answer).then_some(retyped)
    }

    /// The look-alikes of `answer` the type-confused-answer probe sends:
    /// when `answer` holds exactly one boolean (the decision, as the
    /// deny-answer probe reads it), that boolean as a string (`"true"`), as
    /// a number (`1`) and as a word (`"yes"`), the rest unchanged. Only the
    /// decision is varied: a deployment may rightly ignore a field it does
    /// not read, but never the one that decides.
    pub fn type_confused(&self) -> Vec<Value> {
        let mut booleans = Vec::new();
        let mut answer = self.answer.clone();
        collect_booleans(&mut answer, &mut booleans);
        let [only] = booleans.as_slice() else {
            return Vec::new();
        };
        let decision = **only;
        let mut forms = Vec::new();
        for look_alike in [
            Value::from(decision.to_string()),
            Value::from(u8::from(decision)),
            Value::from(if decision { "yes" } else { "no" }),
        ] {
            let mut form = self.answer.clone();
            let mut slots = Vec::new();
            collect_leaves(&mut form, &mut slots);
            if let Some(slot) = slots.into_iter().find(|v| v.is_boolean()) {
                *slot = look_alike;
            }
            forms.push(form);
        }
        forms
    }

    /// The answer the deny-answer probe sends: `deny_answer`, or else
    /// `answer` with its boolean flipped when it holds exactly one boolean
    /// and that one is `true` (`{"approved": true}` denies as
    /// `{"approved": false}`). `None` when no denial can be told.
    pub fn denial(&self) -> Option<Value> {
        if let Some(deny) = &self.deny_answer {
            return Some(deny.clone());
        }
        denial_of(&self.answer)
    }

    /// The answer the foreign-answer probe sends: `foreign_answer`, or
    /// else, when the pause published who may answer it, `answer` with the
    /// approver's field naming someone not on the list. `None` when
    /// neither tells how an outsider's answer is spelled.
    pub fn foreign(&self, approvers: Option<&crate::Approvers>) -> Option<Value> {
        if let Some(foreign) = &self.foreign_answer {
            return Some(foreign.clone());
        }
        let approvers = approvers.filter(|a| !a.field.is_empty())?;
        let mut answer = self.answer.as_object()?.clone();
        answer.insert(approvers.field.clone(), Value::from(approvers.outsider()));
        Some(Value::Object(answer))
    }

    /// Why a probe on by default did not run: its answer could not be
    /// derived from `answer`.
    pub(crate) fn underivable(&self, probe: &str) -> Option<String> {
        match probe {
            "approval/deny-answer" if self.denial().is_none() => Some(
                "`answer` holds no single true boolean to flip into a denial: give deny_answer"
                    .into(),
            ),
            "approval/unfit-answer" if self.unfit().is_none() => {
                Some("`answer` has no leaf to give another type: give unfit_answer".into())
            }
            "approval/type-confused-answer" if self.type_confused().is_empty() => Some(
                "`answer` holds no single boolean deciding it, whose look-alikes could be \
                     coerced"
                    .into(),
            ),
            _ => None,
        }
    }

    /// The `human` capability and the `resume` operation.
    pub fn requirements(&self) -> Requirements {
        Requirements {
            capabilities: vec![PackKind::ApprovalResume.capability().into()],
            operations: vec!["resume".into()],
            ..Requirements::default()
        }
    }
}

fn is_answer(value: &Value) -> bool {
    value.as_object().is_some_and(|fields| !fields.is_empty())
}

/// `value` with every leaf replaced by a value of another type.
fn retyped(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, child)| (key.clone(), retyped(child)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(retyped).collect()),
        Value::Bool(_) => Value::String("maybe".into()),
        Value::Number(_) | Value::Null => Value::String("many".into()),
        Value::String(_) => Value::from(0),
    }
}

/// Every leaf of `value`, for replacing in place.
fn collect_leaves<'a>(value: &'a mut Value, out: &mut Vec<&'a mut Value>) {
    match value {
        Value::Object(map) => map
            .values_mut()
            .for_each(|child| collect_leaves(child, out)),
        Value::Array(items) => items
            .iter_mut()
            .for_each(|child| collect_leaves(child, out)),
        leaf => out.push(leaf),
    }
}

/// `answer` turned into a denial: its one boolean, when it holds exactly
/// one and that one is `true`, flipped (`{"approved": true}` denies as
/// `{"approved": false}`). `None` when no denial can be told from it.
pub(crate) fn denial_of(answer: &Value) -> Option<Value> {
    let mut denial = answer.clone();
    let mut booleans = Vec::new();
    collect_booleans(&mut denial, &mut booleans);
    match booleans.as_mut_slice() {
        [only] if **only => {
            **only = false;
            Some(denial)
        }
        _ => None,
    }
}

/// Every boolean leaf of `value`, for flipping in place.
fn collect_booleans<'a>(value: &'a mut Value, out: &mut Vec<&'a mut bool>) {
    match value {
        Value::Object(map) => map
            .values_mut()
            .for_each(|child| collect_booleans(child, out)),
        Value::Array(items) => items
            .iter_mut()
            .for_each(|child| collect_booleans(child, out)),
        Value::Bool(flag) => out.push(flag),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn type_confused_answers_vary_the_deciding_boolean_alone() {
        let pack = super::ApprovalResumePack {
            answer: json!({"approved": true, "limit": 10, "note": "ok"}),
            ..super::ApprovalResumePack::default()
        };
        assert_eq!(
            pack.type_confused(),
            [
                json!({"approved": "true", "limit": 10, "note": "ok"}),
                json!({"approved": 1, "limit": 10, "note": "ok"}),
                json!({"approved": "yes", "limit": 10, "note": "ok"}),
            ]
        );
        for undecided in [json!({"note": "ok"}), json!({"a": true, "b": false})] {
            let pack = super::ApprovalResumePack {
                answer: undecided,
                ..super::ApprovalResumePack::default()
            };
            assert!(pack.type_confused().is_empty());
            assert!(pack.underivable("approval/type-confused-answer").is_some());
        }
    }

    use super::*;

    fn pack(answer: Value) -> ApprovalResumePack {
        ApprovalResumePack {
            answer,
            ..ApprovalResumePack::default()
        }
    }

    #[test]
    fn an_unfit_answer_is_derived_leaf_by_leaf_unless_given() {
        let derived = pack(json!({"approved": true, "note": "ok", "limit": 3}))
            .unfit()
            .unwrap();
        assert_eq!(
            derived,
            json!({"approved": "maybe", "note": 0, "limit": "many"})
        );
        let mut given = pack(json!({"approved": true}));
        given.unfit_answer = Some(json!({"approved": "perhaps"}));
        assert_eq!(given.unfit(), Some(json!({"approved": "perhaps"})));
        assert_eq!(
            pack(json!({"nested": {}})).unfit(),
            None,
            "no leaf to change"
        );
    }

    #[test]
    fn a_denial_is_derived_only_from_one_true_boolean() {
        assert_eq!(
            pack(json!({"approved": true, "note": "ok"})).denial(),
            Some(json!({"approved": false, "note": "ok"}))
        );
        assert_eq!(
            pack(json!({"decision": {"approved": true}})).denial(),
            Some(json!({"decision": {"approved": false}}))
        );
        for unclear in [
            json!({"approved": false}),
            json!({"a": true, "b": true}),
            json!({"choice": "approve"}),
        ] {
            assert_eq!(pack(unclear.clone()).denial(), None, "{unclear}");
        }
        let mut given = pack(json!({"choice": "approve"}));
        given.deny_answer = Some(json!({"choice": "reject"}));
        assert_eq!(given.denial(), Some(json!({"choice": "reject"})));
    }

    #[test]
    fn derived_answers_turn_their_probes_on() {
        let mut pack = pack(json!({"approved": true}));
        pack.pause_prompt = "cancel".into();
        pack.interaction_tool = "ask".into();
        let names: Vec<String> = pack.scenarios().into_iter().map(|s| s.name).collect();
        assert!(
            names.iter().any(|n| n == "approval/deny-answer"),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n == "approval/unfit-answer"),
            "{names:?}"
        );
        pack.answer = json!({"choice": "approve"});
        let names: Vec<String> = pack.scenarios().into_iter().map(|s| s.name).collect();
        assert!(
            !names.iter().any(|n| n == "approval/deny-answer"),
            "{names:?}"
        );
        // A denial given without the gated action's name is judged by its
        // effects.
        pack.deny_answer = Some(json!({"choice": "reject"}));
        assert!(pack.check().is_ok());
        let names: Vec<String> = pack.scenarios().into_iter().map(|s| s.name).collect();
        assert!(
            names.iter().any(|n| n == "approval/deny-answer"),
            "{names:?}"
        );
    }
}
