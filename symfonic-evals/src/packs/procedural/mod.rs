//! The procedural skills pack: demonstrate, promote, review, persist,
//! enforce; and its probes (the other restart placement, separate
//! conversations, identities recomputed from the published procedure, a
//! gate sweep against the contract's evaluator, the review's operator role,
//! decoy, control and rejected demonstrations, a draft rejected at the
//! review door, other wordings of the action prompt, another tool called
//! between the draft and the review, several governed calls in one
//! message, the blocked request approved by a person and still refused, a
//! control turn after a single demonstration).

mod binding;
mod lifecycle;
mod multi_call;
mod one_demonstration;
mod rejection;
mod routes;
mod rules;
mod scenarios;
mod sweep;
mod sweep_states;
mod sweep_unnamed;
mod through_approval;

#[cfg(test)]
mod fixture;

use serde_json::Value;

use super::arguments::ArgumentChecks;
use super::probes::Probe;
use super::{ArgumentError, PackKind};
use crate::assertion::Retries;
use crate::capability::{Requirements, PROCEDURAL_PRECONDITION, PROCEDURAL_REVIEW};
use crate::contracts::PRECONDITION_STAGE;
use crate::scenario::TrialPolicy;

pub use scenarios::SEED;

/// The review status of an approved procedure.
pub const APPROVED: &str = "approved";

/// The fewest states the gate sweep judges by default.
pub const DEFAULT_GATE_SWEEP: u32 = 16;

/// How many states per published predicate the default sweep budget
/// allows (plus the two declared states), so every predicate's commonest
/// slips are tried however many there are.
pub const GATE_SWEEP_PER_PREDICATE: u32 = 6;

/// The most states the default sweep budget grows to.
pub const MAX_DEFAULT_GATE_SWEEP: u32 = 48;

/// How many states per state leaf no published predicate names the
/// default sweep budget adds (one the contract refuses, one it admits), so
/// a gate with a second door on another field is tried on every such leaf.
pub const GATE_SWEEP_PER_UNNAMED_LEAF: u32 = 2;

/// The most states the default sweep budget adds for unnamed leaves.
pub const MAX_UNNAMED_GATE_SWEEP: u32 = 8;

/// The probes of the procedural pack, in the order they run.
pub const PROBES: &[Probe] = &[
    Probe::default_on(
        "procedural/enforcement-without-restart",
        "an approval in force only after a restart (a policy cache loaded at start-up): run when \
         the seed restarts before enforcing",
    ),
    Probe::default_on(
        "procedural/enforcement-after-restart",
        "an approval that lives only in process memory: run when the seed does not restart before \
         enforcing",
    ),
    Probe::default_on(
        "procedural/separate-conversations",
        "recall or the governed tool taken from the chat transcript (the review's words, the last \
         tool called) rather than the store: the review and each enforcement turn run in \
         conversations of their own",
    ),
    Probe::default_on(
        "procedural/review-needs-operator",
        "a review door open to users: the review prompt sent as a user's turn, in the \
         conversation and in the operator's own, must approve nothing (the role decides, not \
         the channel)",
    ),
    Probe::default_on(
        "procedural/identity-bound",
        "identity digests that are labels rather than digests of what was reviewed and enforced, \
         and pack states that do not mean what they claim",
    ),
    Probe::default_on(
        "procedural/gate-sweep",
        "a gate that agrees with the contract only on the two states the seed tries: key casing, \
         missing keys, null, wrong types, neighbouring values, list membership, and a second door \
         on a field no predicate names (the declared states with such a leaf set to a value seen \
         in another of them)",
    ),
    Probe::enabled_by(
        "procedural/decoy-stays-draft",
        "decoy_demonstrations",
        "a review that approves every draft, or a second draft that leaks into recall or governs \
         at the gate",
    ),
    Probe::enabled_by(
        "procedural/control-promotes-nothing",
        "control_demonstrations",
        "a promotion count that is not the cycle's own: turns with nothing to learn must promote \
         nothing",
    ),
    Probe::default_on(
        "procedural/rejected-demonstrations",
        "learning from handling a reviewer rejected: on-topic demonstrations marked rejected (the \
         pack's own unless `rejected_demonstrations` names others) must promote no draft and \
         leave nothing that governs the tool or reaches the model",
    ),
    Probe::enabled_by(
        "procedural/paraphrases",
        "paraphrases",
        "a gate judged by tool name: another wording of the request (`paraphrases`) that the \
         model routes to a second tool reaching the same effect (an alias, a \"fast\" variant) \
         the gate does not judge; each wording runs through the blocked step, where no effect \
         of the governed tool's family may be attempted by any tool, and the satisfied step, \
         where it must be reached",
    ),
    Probe::enabled_by(
        "procedural/review-binding",
        "interleaved_prompt",
        "a review that binds the approved procedure to whatever tool was called last rather \
         than the draft's: a turn calling another tool (`interleaved_prompt`) runs between the \
         draft probe and the review, and the review must still approve a procedure governing \
         `action_tool`, which the enforcement turns enforce",
    ),
    Probe::on_declaring(
        "procedural/rule-fidelity",
        REVIEW,
        "a review door that stores less than the operator approved (a dropped conjunct) or a \
         built-in copy of the rule: the harness approves a two-predicate rule of its own and the \
         published procedure and the gate must follow it predicate for predicate",
    ),
    Probe::on_declaring(
        "procedural/amend",
        REVIEW,
        "a gate that caches the first approval: after the operator amends the rule to its \
         reverse, the gate follows at once and after a restart, and the identities change",
    ),
    Probe::on_declaring(
        "procedural/revoke",
        REVIEW,
        "a revoked procedure that still governs or is still shown: after revocation the tool \
         runs unchecked and the fragment is gone from the model input, at once and after a \
         restart, and no identity reaches enforcement; teaching the demonstrations again brings \
         it back approved, unreviewed",
    ),
    Probe::on_declaring(
        "procedural/two-procedures",
        REVIEW,
        "a gate that judges only one of two approved procedures on a tool: both must hold, on \
         states meeting only one and across the gate sweep",
    )
    .and_needs("decoy_demonstrations"),
    Probe::on_declaring(
        "procedural/relearn-after-approval",
        REVIEW,
        "re-learning that rewrites an approved procedure: the demonstrations run again after \
         approval promote nothing, and its rule, text and identity stay as approved",
    ),
    Probe::on_declaring(
        "procedural/reject-draft",
        REVIEW,
        "a rejected draft that governs or comes back: after the operator rejects the draft at \
         the review door it cannot be approved, governs nothing at once and after a restart, and \
         the same demonstrations taught again bring back no draft or procedure",
    ),
    Probe::on_declaring(
        "procedural/replicas",
        crate::capability::REPLICAS,
        "approvals an instance keeps to itself (a policy cache its own review door refreshes): \
         the review on one instance, enforcement on a second, already running, with no restart",
    ),
    Probe::enabled_by(
        MULTI_CALL,
        "multi_call_prompt",
        "a gate that judges only the first call of a model message: one request naming several \
         subjects, under the blocked state every governed call refused and under the satisfied \
         state every one admitted, each judged in the gate's trace",
    ),
    Probe::enabled_by(
        THROUGH_APPROVAL,
        "approval_prompt",
        "an approved request routed straight to the tool, around the procedure gate: where the \
         governed tool also waits for a person, the request that pauses is approved under the \
         blocked state and the gate must still refuse it, with no governed effect; under the \
         satisfied state the approved call is carried out once",
    ),
    Probe::enabled_by(
        ONE_DEMONSTRATION,
        "control_demonstrations",
        "a promotion threshold counted over turns rather than demonstrations (the turns since a \
         lesson was first seen, or every turn after it): one demonstration, then a control turn, \
         which must promote nothing, then the other demonstrations, the last still promoting",
    ),
];

/// The probe that sends a control turn after a single demonstration.
pub(super) const ONE_DEMONSTRATION: &str = "procedural/one-demonstration-then-control";

/// The probe that sends a request held for a person's approval through
/// the procedure gate after the approval.
pub(super) const THROUGH_APPROVAL: &str = "procedural/through-approval";

/// The probe that sends one request making several governed calls.
pub(super) const MULTI_CALL: &str = "procedural/multi-call";

/// The operation the lifecycle probes drive.
pub(super) const REVIEW: &str = "review";

/// Arguments of the procedural skills pack. `Default` fills the optional
/// arguments with their documented defaults and leaves the required ones
/// empty, which [`check`](Self::check) refuses.
///
#[doc = include_str!("../../../docs/procedural.md")]
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProceduralPack {
    /// Turns that give consolidation something to generalise; the last must
    /// show the promoted count the cycle reported.
    pub demonstrations: Vec<String>,
    /// The operator turn under which the draft is approved.
    pub review_prompt: String,
    /// A tool-calling turn before review: the draft must be inert and unseen.
    pub draft_prompt: String,
    /// The enforcement turn whose state satisfies the precondition.
    pub satisfied_prompt: String,
    /// The enforcement turn whose state does not.
    pub blocked_prompt: String,
    /// State under which the approved precondition holds.
    pub satisfied_state: Value,
    /// State under which it does not; must differ from `satisfied_state`.
    pub blocked_state: Value,
    /// State for the pre-approval tool call.
    pub draft_state: Value,
    /// The tool the procedure governs and the review row must name.
    pub action_tool: String,
    /// Text the recall block must show once, and only once, approved.
    pub procedure_fragment: String,
    /// Where the deployment publishes the promoted count.
    pub promotion_attribute: String,
    /// Where it publishes the review rows.
    pub review_attribute: String,
    /// Identity digests of approved procedures read through the review door.
    pub review_identity_attribute: String,
    /// Identity digests of the procedures the precondition stage read.
    pub enforcement_identity_attribute: String,
    /// Where it publishes the approved procedures as data, each
    /// `{"tool", "precondition", "text"}`, from which the harness recomputes
    /// their identities and generates the gate sweep's states.
    pub procedures_attribute: String,
    /// The precondition stage's name in the governance trace.
    pub precondition_stage: String,
    /// Rebuild the deployment before the satisfied turn.
    pub restart_before_enforcement: bool,
    /// The conversation every seed step runs in (probes derive theirs).
    pub conversation: String,
    /// A second family of turns that promotes a second draft, which the
    /// review must leave a draft.
    pub decoy_demonstrations: Vec<String>,
    /// Text of the decoy's procedure, which must never reach the model.
    pub decoy_fragment: Option<String>,
    /// Turns with nothing to learn: each must promote nothing.
    pub control_demonstrations: Vec<String>,
    /// On-topic demonstrations a reviewer rejected, sent marked so
    /// (`feedback: "rejected"`): nothing may be learned from them. Empty
    /// (the default), the rejected-demonstrations probe marks the pack's
    /// own `demonstrations` rejected.
    pub rejected_demonstrations: Vec<String>,
    /// Other wordings of the action prompt, as a real model would see
    /// them: each runs through the blocked step and then the satisfied
    /// one, judged by the governed effect (whichever tool reaches it)
    /// rather than by calls named `action_tool`. Empty (the default), the
    /// paraphrases probe does not run.
    pub paraphrases: Vec<String>,
    /// A user turn that calls a tool other than `action_tool`, sent
    /// between the draft probe and the review by the review-binding
    /// probe. `None` (the default), the probe does not run.
    pub interleaved_prompt: Option<String>,
    /// How many states the gate sweep judges. The default, 16, grows to 6
    /// per published predicate plus the two declared states when that is
    /// more (up to 48), then adds 2 per state leaf no predicate names (up
    /// to 8 more); any other value is the total, at most a quarter of it
    /// for unnamed leaves.
    pub gate_sweep: u32,
    /// How the seed's ledger counts treat retries: `exact` (the default:
    /// every attempt applies, no duplicate) or `same_key`, where a retry
    /// under an applied key that applied nothing twice is accepted and the
    /// applied effects alone are counted.
    pub retries: Retries,
    /// One request naming several subjects, for which the model makes
    /// several calls of `action_tool` at once: each must be judged by the
    /// gate. `None` (the default) leaves the multi-call probe out.
    pub multi_call_prompt: Option<String>,
    /// A request for `action_tool` that the deployment holds for a
    /// person's approval (where the same tool both waits for a person and
    /// is governed by the procedure): given with `approval_answer`, the
    /// through-approval probe approves it under the blocked state, where
    /// the gate must still refuse, and under the satisfied state. `None`
    /// (the default) leaves the probe out.
    pub approval_prompt: Option<String>,
    /// The person's answer that approves `approval_prompt`'s pause, as the
    /// deployment's answer schema spells it (`{"approved": true}`).
    pub approval_answer: Option<Value>,
    /// Probes to switch off, by name (see [`PackKind::probes`](super::PackKind::probes)).
    pub skip_probes: Vec<String>,
    /// Trials and passes required (not read from JSON: a policy holds a
    /// duration, which the attribute spells as `step_timeout_ms`).
    #[serde(skip)]
    pub policy: TrialPolicy,
}

impl Default for ProceduralPack {
    fn default() -> Self {
        Self {
            demonstrations: Vec::new(),
            review_prompt: String::new(),
            draft_prompt: String::new(),
            satisfied_prompt: String::new(),
            blocked_prompt: String::new(),
            satisfied_state: Value::Null,
            blocked_state: Value::Null,
            draft_state: Value::Null,
            action_tool: String::new(),
            procedure_fragment: String::new(),
            promotion_attribute: "procedural_promoted".into(),
            review_attribute: "procedural_review".into(),
            review_identity_attribute: "procedural_review_ids".into(),
            enforcement_identity_attribute: "procedural_enforcement_ids".into(),
            procedures_attribute: "procedural_review_procedures".into(),
            precondition_stage: PRECONDITION_STAGE.into(),
            restart_before_enforcement: true,
            conversation: "procedural".into(),
            decoy_demonstrations: Vec::new(),
            decoy_fragment: None,
            control_demonstrations: Vec::new(),
            rejected_demonstrations: Vec::new(),
            paraphrases: Vec::new(),
            interleaved_prompt: None,
            multi_call_prompt: None,
            approval_prompt: None,
            approval_answer: None,
            gate_sweep: DEFAULT_GATE_SWEEP,
            retries: Retries::Exact,
            skip_probes: Vec::new(),
            policy: TrialPolicy::default(),
        }
    }
}

impl ProceduralPack {
    /// Refuses arguments that would make a pack unable to discriminate.
    ///
    /// # Errors
    ///
    /// Every offending argument.
    pub fn check(&self) -> Result<(), Vec<ArgumentError>> {
        let mut checks = ArgumentChecks::default();
        checks.require(
            !self.demonstrations.is_empty(),
            "demonstrations",
            "needs at least one demonstration turn",
        );
        checks.require(
            self.demonstrations.iter().all(|d| !d.is_empty()),
            "demonstrations",
            "a demonstration must not be an empty prompt",
        );
        checks.text("review_prompt", &self.review_prompt);
        checks.text("draft_prompt", &self.draft_prompt);
        checks.text("satisfied_prompt", &self.satisfied_prompt);
        checks.text("blocked_prompt", &self.blocked_prompt);
        checks.text("action_tool", &self.action_tool);
        checks.text("procedure_fragment", &self.procedure_fragment);
        checks.state("satisfied_state", &self.satisfied_state);
        checks.state("blocked_state", &self.blocked_state);
        checks.state("draft_state", &self.draft_state);
        checks.require(
            self.satisfied_state != self.blocked_state,
            "blocked_state",
            "equals satisfied_state, so the refusal turn would repeat the admitted one \
             and prove no precondition was read",
        );
        checks.require(
            self.draft_state != self.satisfied_state,
            "draft_state",
            "equals satisfied_state, a state the approved rule admits, so the draft probe \
             cannot show a draft that governs; use a state the rule would refuse",
        );
        self.check_probe_arguments(&mut checks);
        for (argument, value) in [
            ("promotion_attribute", &self.promotion_attribute),
            ("review_attribute", &self.review_attribute),
            ("review_identity_attribute", &self.review_identity_attribute),
            (
                "enforcement_identity_attribute",
                &self.enforcement_identity_attribute,
            ),
            ("procedures_attribute", &self.procedures_attribute),
            ("precondition_stage", &self.precondition_stage),
            ("conversation", &self.conversation),
        ] {
            checks.text(argument, value);
        }
        checks.policy(&self.policy);
        checks.finish()
    }

    /// Tools plus the two procedural traits.
    pub fn requirements(&self) -> Requirements {
        Requirements {
            capabilities: vec![PackKind::Procedural.capability().into()],
            traits: vec![PROCEDURAL_PRECONDITION.into(), PROCEDURAL_REVIEW.into()],
            ..Requirements::default()
        }
    }

    fn check_probe_arguments(&self, checks: &mut ArgumentChecks) {
        checks.prompts("decoy_demonstrations", &self.decoy_demonstrations);
        checks.prompts("control_demonstrations", &self.control_demonstrations);
        let shared = |items: &[String], with: &[String]| items.iter().any(|i| with.contains(i));
        checks.require(
            !shared(&self.decoy_demonstrations, &self.demonstrations),
            "decoy_demonstrations",
            "repeats a demonstration, so the decoy would teach the procedure under review \
             rather than a second one",
        );
        checks.require(
            !shared(&self.control_demonstrations, &self.demonstrations)
                && !shared(&self.control_demonstrations, &self.decoy_demonstrations),
            "control_demonstrations",
            "repeats a demonstration, which has something to teach; a control turn must not",
        );
        checks.prompts("rejected_demonstrations", &self.rejected_demonstrations);
        checks.require(
            !shared(&self.rejected_demonstrations, &self.control_demonstrations),
            "rejected_demonstrations",
            "repeats a control turn, which has nothing to teach, so its rejection would prove \
             nothing; a rejected demonstration must be on-topic",
        );
        checks.prompts("paraphrases", &self.paraphrases);
        checks.require(
            !self
                .paraphrases
                .iter()
                .any(|p| *p == self.satisfied_prompt || *p == self.blocked_prompt),
            "paraphrases",
            "repeats the action prompt (`satisfied_prompt` or `blocked_prompt`), so it would \
             run the seed's own wording again; a paraphrase must word the request otherwise",
        );
        if let Some(prompt) = &self.interleaved_prompt {
            checks.text("interleaved_prompt", prompt);
            let actions = [
                &self.draft_prompt,
                &self.satisfied_prompt,
                &self.blocked_prompt,
            ];
            checks.require(
                !actions.contains(&prompt),
                "interleaved_prompt",
                "repeats a prompt that calls `action_tool` (`draft_prompt`, `satisfied_prompt` or \
                 `blocked_prompt`); the turn between the draft and the review must call another \
                 tool",
            );
        }
        let decoys = !self.decoy_demonstrations.is_empty();
        match &self.decoy_fragment {
            None => checks.require(
                !decoys,
                "decoy_fragment",
                "is needed with `decoy_demonstrations`: the decoy's text is what must stay \
                 out of the model input",
            ),
            Some(fragment) => {
                checks.text("decoy_fragment", fragment);
                checks.require(
                    *fragment != self.procedure_fragment,
                    "decoy_fragment",
                    "equals `procedure_fragment`, so the decoy could not be told from the \
                     approved procedure",
                );
                checks.require(
                    decoys,
                    "decoy_fragment",
                    "is read only by the decoy probe; give `decoy_demonstrations` too",
                );
            }
        }
        self.check_multi_call(checks);
        self.check_through_approval(checks);
        checks.require(
            self.gate_sweep >= 1,
            "gate_sweep",
            "is how many states the sweep judges, at least one (skip the probe to run none)",
        );
        checks.probes(&self.skip_probes, PROBES);
    }
}

/// The sweep's turns for `gate_sweep`, split between states varying the
/// named paths and (at most `available`) states varying the `leaves` no
/// predicate names. The default adds the second share on top of the named
/// budget, which stays as it was; any other value is the total, a quarter
/// of it at most going to unnamed leaves.
pub(crate) fn gate_sweep_split(
    gate_sweep: u32,
    predicates: usize,
    leaves: usize,
    available: usize,
) -> (usize, usize) {
    let named = gate_sweep_budget(gate_sweep, predicates);
    if gate_sweep == DEFAULT_GATE_SWEEP {
        let extra = (GATE_SWEEP_PER_UNNAMED_LEAF as usize * leaves)
            .min(MAX_UNNAMED_GATE_SWEEP as usize)
            .min(available);
        (named, extra)
    } else {
        let share = (named / 4).min(available);
        (named - share, share)
    }
}

/// The sweep's budget for `gate_sweep` and `predicates` published
/// predicates: the default grows with the predicates, any other value is
/// used as it is.
pub(crate) fn gate_sweep_budget(gate_sweep: u32, predicates: usize) -> usize {
    if gate_sweep != DEFAULT_GATE_SWEEP {
        return gate_sweep as usize;
    }
    let scaled = 2 + GATE_SWEEP_PER_PREDICATE as usize * predicates;
    scaled.clamp(DEFAULT_GATE_SWEEP as usize, MAX_DEFAULT_GATE_SWEEP as usize)
}
