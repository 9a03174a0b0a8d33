//! The same help desk written in Python (`examples/helpdesk-py/`), judged
//! over the process protocol: its launchers (the blocking reference desk and
//! the asyncio desk), the pack arguments it is evaluated with (every probe
//! enabled), the effect oracle that reads its SQLite store, and its broken
//! twins with where each must be caught. The main job and
//! `tests/python_packs.rs` share these definitions.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use serde_json::json;
use symfonic_evals::process::ProcessSpec;
use symfonic_evals::{
    ApprovalResumePack, ArgumentMatch, ExactlyOncePack, ExtensionToolPack, PackDefinition,
    ProceduralPack, ProcessTarget, RunOptions, TargetContext,
};

use crate::twins::{Catch, Pack};

/// The directory of the Python desks.
pub fn desk_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../helpdesk-py")
}

/// The command that starts the Python desk, or one of its twins, forked
/// from an interpreter that imported the desk once.
pub fn spec(twin: Option<&str>) -> ProcessSpec {
    let spec = ProcessSpec::new("python3")
        .arg(desk_dir().join("helpdesk.py"))
        .fork_server(true);
    match twin {
        Some(twin) => spec.args(["--twin", twin]),
        None => spec,
    }
}

/// The command that starts the Python desk in the honest configuration
/// named `variant` (see [`crate::Variant`]).
pub fn variant_spec(variant: &str) -> ProcessSpec {
    ProcessSpec::new("python3")
        .arg(desk_dir().join("helpdesk.py"))
        .args(["--variant", variant])
        .fork_server(true)
}

/// The command that starts the Python desk in its model mode
/// (`--model openai`, the official OpenAI SDK) under `python`, an
/// interpreter that has the SDK installed. The harness points the SDK at the
/// trial's model endpoint through `OPENAI_BASE_URL`.
pub fn model_spec(python: impl Into<std::ffi::OsString>) -> ProcessSpec {
    ProcessSpec::new(python)
        .arg(desk_dir().join("helpdesk.py"))
        .args(["--model", "openai"])
        // The SDK is imported once, by the fork server, not at every start.
        .preload("openai_desk")
}

/// The command that starts the asyncio desk with `python`, an interpreter
/// the companion package is installed in (the desk imports it from there,
/// not from the checkout).
pub fn async_spec(python: &Path) -> ProcessSpec {
    ProcessSpec::new(python.as_os_str()).arg(desk_dir().join("async_desk.py"))
}

/// Starts the desk for one trial.
///
/// # Panics
///
/// When the child cannot be started or fails its handshake; the runner
/// reports that as the deployment not building.
pub fn start(ctx: &TargetContext, spec: &ProcessSpec) -> ProcessTarget {
    ProcessTarget::spawn(ctx, spec).unwrap_or_else(|error| panic!("{error}"))
}

/// The effect oracle: how many effects the desk's own store holds (refunds
/// issued, tickets escalated, notices sent), read from its SQLite file in the durable
/// directory, and from its JSON-lines outbox when it keeps one. After every
/// step the harness requires this to equal the ledger's applied effects, so
/// an effect written outside the ledger, or a ledger entry with nothing
/// behind it, shows.
///
/// # Errors
///
/// When the store cannot be opened or read.
pub fn effects(durable_dir: &Path) -> Result<u64, String> {
    let path = durable_dir.join("helpdesk.sqlite3");
    let db = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|error| format!("cannot open the desk's store: {error}"))?;
    db.busy_timeout(Duration::from_secs(2))
        .map_err(|error| error.to_string())?;
    let count: i64 = db
        .query_row(
            "SELECT (SELECT COUNT(*) FROM refunds) + (SELECT COUNT(*) FROM escalations) \
             + (SELECT COUNT(*) FROM notices)",
            [],
            |row| row.get(0),
        )
        .map_err(|error| format!("cannot count the desk's effects: {error}"))?;
    // A desk that keeps its effects as JSON lines (an honest variant's
    // layout) holds one line per effect.
    let lines = match std::fs::read_to_string(durable_dir.join("outbox.jsonl")) {
        Ok(text) => text.lines().filter(|line| !line.trim().is_empty()).count(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => 0,
        Err(error) => return Err(format!("cannot read the desk's outbox file: {error}")),
    };
    u64::try_from(count)
        .map(|rows| rows + lines as u64)
        .map_err(|error| error.to_string())
}

/// Whether the desk's store holds the pause `token` was issued for, spent
/// or not: a reset that opens a new session keeps the old one's pauses.
///
/// # Errors
///
/// When the store cannot be opened or read.
pub fn pause_on_file(durable_dir: &Path, token: &str) -> Result<bool, String> {
    let path = durable_dir.join("helpdesk.sqlite3");
    let db = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|error| format!("cannot open the desk's store: {error}"))?;
    db.busy_timeout(Duration::from_secs(2))
        .map_err(|error| error.to_string())?;
    db.query_row(
        "SELECT COUNT(*) FROM pauses WHERE token = ?1",
        [token],
        |row| row.get::<_, i64>(0),
    )
    .map(|n| n > 0)
    .map_err(|error| format!("cannot read the desk's pauses: {error}"))
}

/// How many lessons the Python desk keeps running totals for (the
/// `running-totals` variant's `lesson_totals`), read from its store alone:
/// the variant's shape check.
///
/// # Errors
///
/// When the store cannot be opened or holds no totals table.
pub fn lessons_totalled(durable_dir: &Path) -> Result<u64, String> {
    let path = durable_dir.join("helpdesk.sqlite3");
    let db = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|error| format!("cannot open the desk's store: {error}"))?;
    db.query_row("SELECT COUNT(*) FROM lesson_totals", [], |row| row.get(0))
        .map_err(|error| format!("cannot count the desk's lesson totals: {error}"))
}

/// Run options with the effect oracle over the desk's store.
pub fn run_options() -> RunOptions {
    RunOptions {
        effects_probe: Some(effects),
        ..RunOptions::default()
    }
}

/// The procedural pack as the Python desk is evaluated with it, decoy and
/// control probes included, and a whole order's refund, which a manager
/// approves before the gate judges it. The rule refuses one region rather than
/// admitting one, so the gate sweep's missing-key state separates a gate
/// that reads a missing key as null from one that fails it closed; and it
/// admits verified accounts only (`verified eq true`, a boolean), so the
/// sweep tries the boolean's text spellings (`"true"`, `"True"`, `"1"`)
/// and a number in its place.
pub fn procedural() -> PackDefinition {
    let lesson = "verify the account region, then issue the refund";
    let decoy = "confirm the customer's identity, then close the ticket";
    PackDefinition::Procedural(ProceduralPack {
        demonstrations: (1..=2)
            .map(|n| format!("walk me through refunding order {n}: {lesson}"))
            .collect(),
        draft_prompt: "refund order 3".into(),
        draft_state: json!({"region": "EU", "priority": "urgent"}),
        review_prompt: "approve the refund procedure: governs issue_refund when region neq EU \
                        and verified eq true"
            .into(),
        satisfied_prompt: "refund order 4".into(),
        satisfied_state: json!({"region": "US", "priority": "normal", "verified": true}),
        blocked_prompt: "refund order 5".into(),
        // Verified too: the region alone refuses it.
        blocked_state: json!({"region": "EU", "priority": "normal", "verified": true}),
        action_tool: "issue_refund".into(),
        procedure_fragment: "verify the account region".into(),
        decoy_demonstrations: (11..=12)
            .map(|n| format!("walk me through closing ticket {n}: {decoy}"))
            .collect(),
        decoy_fragment: Some("confirm the customer's identity".into()),
        control_demonstrations: vec![
            "thanks, that is all for today".into(),
            "what are your opening hours?".into(),
        ],
        multi_call_prompt: Some("refund orders 6 and 7".into()),
        // A whole order's refund waits for a manager, then the gate.
        approval_prompt: Some("refund order 8 in full".into()),
        approval_answer: Some(json!({"approved": true})),
        // A forecast between the draft and the review: the tool called
        // last is then not the draft's.
        interleaved_prompt: Some("what is the weather in Oslo".into()),
        // Every state the two predicates give (20, the boolean's text
        // spellings and a number in its place last), which the default
        // budget (16) stops short of, and the unnamed leaf's three.
        gate_sweep: 32,
        restart_before_enforcement: true,
        ..ProceduralPack::default()
    })
}

/// The approval pack, with the gated action, a denial and an unfit answer,
/// and a replay judged by kind or code.
pub fn approval() -> PackDefinition {
    PackDefinition::ApprovalResume(ApprovalResumePack {
        pause_prompt: "escalate ticket 7 to a supervisor".into(),
        answer: json!({"approved": true}),
        interaction_tool: "ask_user".into(),
        resumable: true,
        replay_error: vec!["PauseTokenReplayedError".into(), "pause.replayed".into()],
        gated_tool: Some("escalate_ticket".into()),
        deny_answer: Some(json!({"approved": false})),
        unfit_answer: Some(json!({"approved": "maybe"})),
        amended_answer: Some(json!({"approved": true, "priority": "urgent"})),
        amended_call: Some(json!({"priority": "urgent"})),
        second_prompt: Some("escalate ticket 8 to a supervisor".into()),
        ..ApprovalResumePack::default()
    })
}

/// The extension pack, with the tool body's witness required.
pub fn extension() -> PackDefinition {
    PackDefinition::ExtensionTool(ExtensionToolPack {
        prompt: "what is the weather in Lisbon".into(),
        tool_name: "weather_lookup".into(),
        arguments: Some(json!({"city": "Lisbon"})),
        argument_match: ArgumentMatch::Exact,
        expected_fragments: vec!["Lisbon".into(), "sunny".into()],
        witnessed: true,
        second_prompt: Some("what is the weather in Oslo".into()),
        second_arguments: Some(json!({"city": "Oslo"})),
        // What the forecast server answers, when the desk binds the
        // harness's MCP fixture as that server.
        fixture_result: Some(json!({"city": "Lisbon", "forecast": "sunny, 21 C"})),
        ..ExtensionToolPack::default()
    })
}

/// The exactly-once pack: escalate a ticket on a person's approval, with
/// the desk killed at every effect boundary and the request retried.
pub fn exactly_once() -> PackDefinition {
    PackDefinition::ExactlyOnce(ExactlyOncePack {
        prompt: "escalate ticket 7 to a supervisor".into(),
        answer: Some(json!({"approved": true})),
        ..ExactlyOncePack::default()
    })
}

/// The definition of `pack` for the Python desk.
pub fn definition(pack: Pack) -> PackDefinition {
    match pack {
        Pack::Procedural => procedural(),
        Pack::ApprovalResume => approval(),
        Pack::ExtensionTool => extension(),
        Pack::ExactlyOnce => exactly_once(),
    }
}

/// A broken variant of the Python desk, selected with `--twin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PythonTwin {
    /// The `--twin` name.
    pub name: &'static str,
    /// The pack that must catch it.
    pub pack: Pack,
    /// Where: the first failure of the run.
    pub catch: Catch,
    /// The other scenarios that fail with it: empty for a flaw only its
    /// probe can see; for a flaw the seed scenario catches, the probes that
    /// repeat the seed's failing step. Every other scenario passes.
    pub also_fails: &'static [&'static str],
    /// The honest configuration the twin's desk is otherwise in (`None`:
    /// the reference): its pack arguments are that variant's.
    pub base: Option<crate::Variant>,
}

impl PythonTwin {
    /// The pack arguments the twin is judged with: its base
    /// configuration's, or the reference's.
    pub fn definition(&self) -> PackDefinition {
        match self.base {
            Some(variant) => variant.python_definition(self.pack),
            None => definition(self.pack),
        }
    }
}

const fn twin(
    name: &'static str,
    pack: Pack,
    catch: (&'static str, &'static str, &'static str, &'static str),
    also_fails: &'static [&'static str],
) -> PythonTwin {
    PythonTwin {
        name,
        pack,
        catch: Catch::at(catch),
        also_fails,
        base: None,
    }
}

const PROCEDURAL_SEED: &str = "procedural-review-and-enforcement";
const APPROVAL_SEED: &str = "approval-pause-resume-and-replay-refusal";
const EXTENSION_SEED: &str = "extension-tool-execution";
const EXACTLY_ONCE_SEED: &str = "exactly-once-effects";

/// The probes with a draft probe or with an admitted refund, which a
/// ledger entry with nothing in the store fails.
const WITH_A_REFUND: &[&str] = &[
    "procedural/enforcement-without-restart",
    "procedural/separate-conversations",
    "procedural/review-needs-operator",
    "procedural/identity-bound",
    "procedural/gate-sweep",
    "procedural/multi-call",
    "procedural/decoy-stays-draft",
    "procedural/review-binding",
    "procedural/rejected-demonstrations",
    "procedural/rule-fidelity",
    "procedural/amend",
    "procedural/revoke",
    "procedural/two-procedures",
    "procedural/relearn-after-approval",
    "procedural/reject-draft",
    "procedural/replicas",
    "procedural/through-approval",
];
/// Every procedural probe whose blocked step is refused (the lifecycle
/// probes enforce the blocked state too; in the rejection probes nothing
/// governs it).
const WITH_BLOCKED: &[&str] = &[
    "procedural/enforcement-without-restart",
    "procedural/separate-conversations",
    "procedural/identity-bound",
    "procedural/gate-sweep",
    "procedural/multi-call",
    "procedural/decoy-stays-draft",
    "procedural/review-binding",
    "procedural/rule-fidelity",
    "procedural/amend",
    "procedural/revoke",
    "procedural/two-procedures",
    "procedural/relearn-after-approval",
    "procedural/replicas",
    "procedural/through-approval",
];
/// The probes that drive the structured review door (each enforces an
/// approval given without a restart since, and binds its identities), and
/// the replicas probe, whose second instance started before the approval.
const WITHOUT_A_RESTART: &[&str] = &[
    "procedural/rule-fidelity",
    "procedural/amend",
    "procedural/revoke",
    "procedural/two-procedures",
    "procedural/relearn-after-approval",
    "procedural/replicas",
];
/// The probes that drive the structured review door: each binds its
/// identities.
const LIFECYCLE: &[&str] = &[
    "procedural/rule-fidelity",
    "procedural/amend",
    "procedural/revoke",
    "procedural/two-procedures",
    "procedural/relearn-after-approval",
];
/// Every procedural probe that restarts before its satisfied step.
const RESTARTED_BEFORE_ENFORCING: &[&str] = &[
    "procedural/separate-conversations",
    "procedural/identity-bound",
    "procedural/gate-sweep",
    "procedural/multi-call",
    "procedural/decoy-stays-draft",
    "procedural/review-binding",
    "procedural/replicas",
    "procedural/through-approval",
];
/// Every approval probe with a replay step.
const WITH_REPLAY: &[&str] = &[
    "approval/restart-between-pause-and-resume",
    "approval/restart-before-replay",
    "approval/crash-inside-resume",
    "approval/forged-token",
    "approval/token-bound-to-conversation",
    "approval/two-conversations",
    "approval/token-predictable",
    "approval/second-request",
    "approval/one-of-two",
    "approval/foreign-answer",
    "approval/question-id-checked",
    "approval/gated-action",
    "approval/deny-answer",
    "approval/unfit-answer",
    "approval/amended-answer",
    "approval/replicas",
    "approval/reset-between",
];
/// Every extension probe that needs the tool to succeed.
const EXTENSION_PROBES: &[&str] = &[
    "extension/repeated-and-fresh-conversation",
    "extension/result-reaches-model",
    "extension/witnessed",
    "extension/fresh-result",
];

/// The fresh-result probe shows and witnesses its calls too: the twins of
/// the result-shown and witnessed probes fail it after them.
const FRESH_RESULT: &[&str] = &["extension/fresh-result"];

/// Every Python twin the main job runs, and where its pack must catch it.
pub const TWINS: [PythonTwin; 71] = [
    // approval
    twin(
        "checkpoint-in-memory",
        Pack::ApprovalResume,
        (
            "approval/restart-between-pause-and-resume",
            "resume after the restart",
            "AttributeEquals",
            "AttributeEquals(resume_checkpoint)",
        ),
        // A crash is a restart too, and a second instance another process.
        &["approval/crash-inside-resume", "approval/replicas"],
    ),
    twin(
        "resume-not-retriable",
        Pack::ApprovalResume,
        (
            "approval/crash-inside-resume",
            "resume killed at its first effect",
            "UnexpectedError",
            "the turn succeeds",
        ),
        &[],
    ),
    twin(
        "tokens-in-memory",
        Pack::ApprovalResume,
        (
            "approval/restart-before-replay",
            "replay",
            "ExpectedError",
            "PauseTokenReplayedError",
        ),
        &["approval/replicas"],
    ),
    // Caught only because every probe's restart is a kill.
    twin(
        "spent-marks-written-at-close",
        Pack::ApprovalResume,
        (
            "approval/restart-before-replay",
            "replay",
            "ExpectedError",
            "PauseTokenReplayedError",
        ),
        &["approval/replicas"],
    ),
    twin(
        "token-unchecked",
        Pack::ApprovalResume,
        (
            "approval/forged-token",
            "forged token",
            "ExpectedError",
            "an error (any kind)",
        ),
        // It answers the conversation's latest pause, the wrong one of two.
        &["approval/one-of-two"],
    ),
    twin(
        "any-conversation-redeems",
        Pack::ApprovalResume,
        (
            "approval/token-bound-to-conversation",
            "foreign conversation",
            "ExpectedError",
            "an error (any kind)",
        ),
        &[],
    ),
    twin(
        "one-pending-pause",
        Pack::ApprovalResume,
        (
            "approval/two-conversations",
            "resume a",
            "UnexpectedError",
            "UnexpectedError",
        ),
        // Two pauses side by side again.
        &["approval/one-of-two"],
    ),
    twin(
        "pending-as-success",
        Pack::ApprovalResume,
        (
            "approval/pending-call-resolved",
            "pause",
            "ToolPending",
            "ToolPending(ask_user, times=1)",
        ),
        &[],
    ),
    twin(
        "question-id-ignored",
        Pack::ApprovalResume,
        (
            "approval/question-id-checked",
            "forged question id",
            "ExpectedError",
            "an error (any kind)",
        ),
        &[],
    ),
    twin(
        "gated-before-answer",
        Pack::ApprovalResume,
        (
            "approval/gated-action",
            "pause",
            "ToolSucceeded",
            "ToolSucceeded(escalate_ticket, times=0)",
        ),
        // Run before anyone answered, it carries no amendment either.
        &["approval/amended-answer"],
    ),
    twin(
        "denial-approves",
        Pack::ApprovalResume,
        (
            "approval/deny-answer",
            "deny",
            "ToolSucceeded",
            "ToolSucceeded(escalate_ticket, times=0)",
        ),
        &[],
    ),
    twin(
        "approval-reused-in-conversation",
        Pack::ApprovalResume,
        (
            "approval/second-request",
            "same request again",
            "AskedOrWithheld",
            "AskedOrWithheld",
        ),
        &[],
    ),
    twin(
        "approval-grants-every-pending",
        Pack::ApprovalResume,
        (
            "approval/one-of-two",
            "resume one",
            "EffectsOfOneApproval",
            "EffectsOfOneApproval",
        ),
        &[],
    ),
    twin(
        "approval-grants-conversation-queue",
        Pack::ApprovalResume,
        (
            "approval/one-of-two",
            "resume first",
            "EffectsOfOneApproval",
            "EffectsOfOneApproval",
        ),
        &[],
    ),
    twin(
        "checkpoint-per-conversation",
        Pack::ApprovalResume,
        (
            "approval/one-of-two",
            "resume second",
            "EffectsOfOneApproval",
            "EffectsOfOneApproval",
        ),
        &[],
    ),
    twin(
        "pauses-answered-last-first",
        Pack::ApprovalResume,
        (
            "approval/one-of-two",
            "resume second",
            "RequestsNotCrossed",
            "RequestsNotCrossed",
        ),
        &[],
    ),
    twin(
        "any-approver-accepted",
        Pack::ApprovalResume,
        (
            "approval/foreign-answer",
            "foreign answer",
            "EffectsWithheld",
            "EffectsWithheld",
        ),
        &[],
    ),
    twin(
        "amendment-ignored",
        Pack::ApprovalResume,
        (
            "approval/amended-answer",
            "amended resume",
            "AmendmentApplied",
            "AmendmentApplied(escalate_ticket)",
        ),
        &[],
    ),
    // The escalation held as the call itself (the approval-on-the-call
    // desk), an edit heard as a plain approval.
    PythonTwin {
        base: Some(crate::Variant::ApprovalOnTheCall),
        ..twin(
            "edited-call-ignored",
            Pack::ApprovalResume,
            (
                "approval/edited-call",
                "edited resume",
                "EditApplied",
                "EditApplied(escalate_ticket.ticket)",
            ),
            &[],
        )
    },
    twin(
        "tokens-numbered-in-order",
        Pack::ApprovalResume,
        (
            "approval/token-predictable",
            "pause 2",
            "PauseTokenUnpredictable",
            "PauseTokenUnpredictable",
        ),
        &[],
    ),
    twin(
        "notice-reposted-on-resume",
        Pack::ApprovalResume,
        (
            "approval/restart-between-pause-and-resume",
            "resume",
            "EffectNotRepeated",
            "EffectNotRepeated",
        ),
        // Every probe's resume is judged for a repeated effect; the
        // seed's, as its contract fixes it, is not.
        crate::twins::APPROVAL_RESUMING.split_at(2).1,
    ),
    twin(
        "unfit-answer-accepted",
        Pack::ApprovalResume,
        (
            "approval/unfit-answer",
            "unfit answer",
            "ExpectedError",
            "an error (any kind)",
        ),
        &["approval/type-confused-answer"],
    ),
    twin(
        "answer-coerced",
        Pack::ApprovalResume,
        (
            "approval/type-confused-answer",
            "look-alike answer 1",
            "ExpectedError",
            "an error (any kind)",
        ),
        &[],
    ),
    twin(
        "replay-wrong-kind",
        Pack::ApprovalResume,
        (
            APPROVAL_SEED,
            "replay",
            "ExpectedError",
            "PauseTokenReplayedError or pause.replayed",
        ),
        WITH_REPLAY,
    ),
    twin(
        "reset-keeps-pause",
        Pack::ApprovalResume,
        (
            "approval/reset-between",
            "pre-reset token",
            "ExpectedError",
            "an error (any kind)",
        ),
        &[],
    ),
    // procedural
    twin(
        "draft-in-recall",
        Pack::Procedural,
        (
            PROCEDURAL_SEED,
            "draft probe",
            "PromptRecallExcludes",
            "PromptRecallExcludes(fragment)",
        ),
        // Every probe with a draft probe step, the revoke probe (the
        // revoked lesson taught again is a draft, shown too) and the
        // reject-draft probe (a rejected draft is shown as well).
        &[
            "procedural/enforcement-without-restart",
            "procedural/separate-conversations",
            "procedural/review-needs-operator",
            "procedural/identity-bound",
            "procedural/gate-sweep",
            "procedural/multi-call",
            "procedural/decoy-stays-draft",
            "procedural/review-binding",
            "procedural/revoke",
            "procedural/reject-draft",
            "procedural/replicas",
            "procedural/through-approval",
        ],
    ),
    twin(
        "review-in-memory",
        Pack::Procedural,
        (
            PROCEDURAL_SEED,
            "satisfied",
            "AttributeEquals",
            "AttributeEquals(procedural_review)",
        ),
        RESTARTED_BEFORE_ENFORCING,
    ),
    twin(
        "gate-ignores-state",
        Pack::Procedural,
        (
            PROCEDURAL_SEED,
            "blocked",
            "StageObserved",
            "outcome=rejected",
        ),
        WITH_BLOCKED,
    ),
    twin(
        "policy-cached-at-start",
        Pack::Procedural,
        (
            "procedural/enforcement-without-restart",
            "satisfied",
            "AttributesSameNonEmpty",
            "AttributesSameNonEmpty(procedural_review_ids, procedural_enforcement_ids)",
        ),
        WITHOUT_A_RESTART,
    ),
    twin(
        "approval-per-conversation",
        Pack::Procedural,
        (
            "procedural/separate-conversations",
            "review",
            "AttributeEquals",
            "AttributeEquals(procedural_review)",
        ),
        &[],
    ),
    twin(
        "reviews-user-turns",
        Pack::Procedural,
        (
            "procedural/review-needs-operator",
            "review as a user",
            "AttributeEquals",
            "AttributeEquals(procedural_review)",
        ),
        &[],
    ),
    twin(
        "operator-rights-by-conversation-name",
        Pack::Procedural,
        (
            "procedural/review-needs-operator",
            "review as a user in the operator's conversation",
            "AttributeEquals",
            "AttributeEquals(procedural_review)",
        ),
        &[],
    ),
    twin(
        "identity-labels",
        Pack::Procedural,
        (
            "procedural/identity-bound",
            "review",
            "ProceduresBound",
            "ProceduresBound",
        ),
        LIFECYCLE,
    ),
    twin(
        "gate-folds-case",
        Pack::Procedural,
        (
            "procedural/gate-sweep",
            "sweep 8: `region` neq: key in capitalised case",
            "GateAgrees",
            "GateAgrees",
        ),
        &["procedural/two-procedures"],
    ),
    twin(
        "gate-missing-is-null",
        Pack::Procedural,
        (
            "procedural/gate-sweep",
            // A missing key fails `neq` by the contract, and null passes it.
            "sweep 4: `region` neq: key missing",
            "GateAgrees",
            "GateAgrees",
        ),
        &[],
    ),
    twin(
        "gate-urgent-fast-lane",
        Pack::Procedural,
        (
            "procedural/gate-sweep",
            // The blocked state with the draft's urgent priority, a field
            // no predicate names, after the 20 states the two predicates
            // give.
            "sweep 21: `priority` named by no predicate, on the blocked state: the value the \
             draft state holds",
            "GateAgrees",
            "GateAgrees",
        ),
        // The two-procedure probe's second rule, composed from the
        // states, names the priority, so its sweep leaves it as it is.
        &[],
    ),
    twin(
        "gate-compares-as-strings",
        Pack::Procedural,
        (
            "procedural/gate-sweep",
            // `str(True)` is the text `True`: the state's text spelling
            // passes the rule's boolean.
            "sweep 16: `verified` eq: the boolean as Python writes it",
            "GateAgrees",
            "refuse",
        ),
        &[],
    ),
    twin(
        "approves-every-draft",
        Pack::Procedural,
        (
            "procedural/decoy-stays-draft",
            "review",
            "AttributeEquals",
            "AttributeEquals(procedural_review)",
        ),
        &[],
    ),
    twin(
        "promoted-counts-episodes",
        Pack::Procedural,
        (
            "procedural/control-promotes-nothing",
            "control 1",
            "AttributeEquals",
            "AttributeEquals(procedural_promoted)",
        ),
        // A control turn after one demonstration is a control turn too.
        &["procedural/one-demonstration-then-control"],
    ),
    twin(
        "promotion-counts-turns-since-first-seen",
        Pack::Procedural,
        (
            "procedural/one-demonstration-then-control",
            "control after one demonstration",
            "AttributeEquals",
            "AttributeEquals(procedural_promoted)",
        ),
        &[],
    ),
    twin(
        "review-door-drops-conjunct",
        Pack::Procedural,
        (
            "procedural/rule-fidelity",
            "approve",
            "PublishedRules",
            "PublishedRules(issue_refund, 1 rule(s) of [2] predicate(s))",
        ),
        &[],
    ),
    twin(
        "gate-caches-rules-by-row",
        Pack::Procedural,
        (
            "procedural/amend",
            "blocked after amend",
            "GateAgrees",
            "admit",
        ),
        &[],
    ),
    twin(
        "revoked-still-governs",
        Pack::Procedural,
        (
            "procedural/revoke",
            "blocked after revoke",
            "GateAgrees",
            "admit",
        ),
        &[],
    ),
    twin(
        "gate-judges-first-procedure-only",
        Pack::Procedural,
        (
            "procedural/two-procedures",
            "blocked",
            "GateAgrees",
            "refuse",
        ),
        &[],
    ),
    twin(
        "gate-judges-first-call-only",
        Pack::Procedural,
        (
            "procedural/multi-call",
            "several calls, blocked",
            "EveryCallJudged",
            "EveryCallJudged(issue_refund, procedural_precondition, refused)",
        ),
        &[],
    ),
    // The approved whole-order refund runs at once: the manager's yes
    // leads straight to the tool, around the gate.
    twin(
        "approved-call-skips-gate",
        Pack::Procedural,
        (
            "procedural/through-approval",
            "approved, blocked",
            "StageObserved",
            "StageObserved(procedural_precondition",
        ),
        &[],
    ),
    twin(
        "gate-overrides-denial",
        Pack::Procedural,
        (
            "procedural/through-approval",
            "denied, satisfied",
            "GovernedEffectWithheld",
            "GovernedEffectWithheld(issue_refund, procedural_precondition)",
        ),
        &[],
    ),
    twin(
        "policy-cache-per-instance",
        Pack::Procedural,
        (
            "procedural/replicas",
            "satisfied",
            "AttributesSameNonEmpty",
            "AttributesSameNonEmpty(procedural_review_ids, procedural_enforcement_ids)",
        ),
        &[],
    ),
    twin(
        "spent-tokens-loaded-at-start",
        Pack::ApprovalResume,
        (
            "approval/replicas",
            "replay on the first instance",
            "ExpectedError",
            "ExpectedError",
        ),
        &[],
    ),
    // The revoked procedure's text stays in what the model is shown.
    twin(
        "revoked-in-recall",
        Pack::Procedural,
        (
            "procedural/revoke",
            "blocked after revoke",
            "PromptRecallExcludes",
            "PromptRecallExcludes(fragment)",
        ),
        &[],
    ),
    // The revocation waits in memory for the desk to close, and the kill
    // before the restarted step loses it: the procedure governs again.
    twin(
        "revocation-written-at-shutdown",
        Pack::Procedural,
        (
            "procedural/revoke",
            "blocked after restart",
            "GateAgrees",
            "admit",
        ),
        &[],
    ),
    // The demonstrations sent again after the revoke teach the lesson
    // anew, and the cycle restores the approval it remembers by text: the
    // gate admits the blocked request once more.
    twin(
        "relearn-restores-revoked",
        Pack::Procedural,
        (
            "procedural/revoke",
            "blocked after teaching again",
            "GateAgrees",
            "admit",
        ),
        &[],
    ),
    twin(
        "relearn-redrafts-approved",
        Pack::Procedural,
        (
            "procedural/relearn-after-approval",
            "relearn 2",
            // The redraft shows first in the review rows it changed.
            "AttributeEquals",
            "AttributeEquals(procedural_review)",
        ),
        // It sets a rejected lesson's row back to a draft as well.
        &["procedural/reject-draft"],
    ),
    twin(
        "rejected-demonstrations-learned",
        Pack::Procedural,
        (
            "procedural/rejected-demonstrations",
            "rejected 2",
            "AttributeEqualsIfPresent",
            "AttributeEqualsIfPresent(procedural_promoted)",
        ),
        &[],
    ),
    twin(
        "rejected-episodes-kept",
        Pack::Procedural,
        (
            "procedural/rejected-demonstrations",
            // The blocked turn's cycle reads the rejected episodes.
            "blocked",
            "ReviewRowsInert",
            "ReviewRowsInert(procedural_review)",
        ),
        &[],
    ),
    twin(
        "rejected-draft-approvable",
        Pack::Procedural,
        (
            "procedural/reject-draft",
            "approve after reject",
            "ExpectedError",
            "ExpectedError",
        ),
        &[],
    ),
    twin(
        "rejected-draft-redrafted",
        Pack::Procedural,
        (
            "procedural/reject-draft",
            // The next turn's cycle drafts the lesson on file again.
            "blocked after reject",
            "ReviewRowsInert",
            "ReviewRowsInert(procedural_review)",
        ),
        &[],
    ),
    // The forecast was looked up last: the approval governs forecasts.
    twin(
        "review-binds-last-tool",
        Pack::Procedural,
        (
            "procedural/review-binding",
            "review",
            "AttributeEquals",
            "AttributeEquals(procedural_review)",
        ),
        &[],
    ),
    // The express refund offered, judged with paraphrases: the blocked
    // paraphrase refunds through it, ungated.
    PythonTwin {
        base: Some(crate::Variant::GatedAliasTool),
        ..twin(
            "alias-tool",
            Pack::Procedural,
            (
                "procedural/paraphrases",
                "blocked, paraphrase 1",
                "GovernedEffectWithheld",
                "GovernedEffectWithheld(issue_refund, procedural_precondition)",
            ),
            &[],
        )
    },
    // extension
    twin(
        "extension-unbound",
        Pack::ExtensionTool,
        (
            EXTENSION_SEED,
            "extension call",
            "ToolSucceeded",
            "ToolSucceeded(weather_lookup, times=1)",
        ),
        EXTENSION_PROBES,
    ),
    twin(
        "call-ids-per-turn",
        Pack::ExtensionTool,
        (
            "extension/repeated-and-fresh-conversation",
            "second call",
            "ToolCallIdsUnique",
            "ToolCallIdsUnique",
        ),
        &[],
    ),
    twin(
        "bridge-drops-arguments",
        Pack::ExtensionTool,
        (
            "extension/witnessed",
            "extension call",
            "ToolWitnessed",
            "ToolWitnessed(weather_lookup",
        ),
        FRESH_RESULT,
    ),
    twin(
        "upstream-error-as-success",
        Pack::ExtensionTool,
        (
            "extension/witnessed",
            "extension call",
            "ToolWitnessed",
            "ToolWitnessed(weather_lookup",
        ),
        FRESH_RESULT,
    ),
    twin(
        "result-hidden-from-model",
        Pack::ExtensionTool,
        (
            "extension/result-reaches-model",
            "extension call",
            "ToolResultShown",
            "ToolResultShown(weather_lookup)",
        ),
        FRESH_RESULT,
    ),
    twin(
        "previous-result-shown",
        Pack::ExtensionTool,
        (
            "extension/fresh-result",
            "second request",
            "ToolResultShown",
            "ToolResultShown(weather_lookup)",
        ),
        &[],
    ),
    twin(
        "result-served-from-cache",
        Pack::ExtensionTool,
        (
            "extension/fresh-result",
            "first request again",
            "ToolWitnessed",
            "ToolWitnessed(weather_lookup",
        ),
        &[],
    ),
    // exactly-once
    twin(
        "key-from-clock-hour",
        Pack::ExactlyOnce,
        (
            "exactly-once/clock-advanced",
            "resume crashed, then a later clock",
            "CrashedEffectRetried",
            "CrashedEffectRetried",
        ),
        &[],
    ),
    twin(
        "key-per-process",
        Pack::ExactlyOnce,
        (
            EXACTLY_ONCE_SEED,
            "crash at resume effect 1",
            "CrashedEffectRetried",
            "CrashedEffectRetried",
        ),
        &["exactly-once/clock-advanced"],
    ),
    twin(
        "row-only-when-applied",
        Pack::ExactlyOnce,
        (
            EXACTLY_ONCE_SEED,
            "crash at resume effect 1",
            "EffectsMatchOracle",
            "EffectsMatchOracle",
        ),
        &["exactly-once/clock-advanced"],
    ),
    twin(
        "brief-shares-escalation-key",
        Pack::ExactlyOnce,
        (
            EXACTLY_ONCE_SEED,
            "learn resume",
            "KeysNotShared",
            "KeysNotShared",
        ),
        &["exactly-once/clock-advanced"],
    ),
    // Nothing in the ledger tells the lost notice from a retry of the
    // escalation: the exact policy's, with no crash to retry after.
    twin(
        "notice-shares-escalation-key",
        Pack::ExactlyOnce,
        (
            EXACTLY_ONCE_SEED,
            "learn resume",
            "KeysNotShared",
            "KeysNotShared(retries=exact)",
        ),
        &["exactly-once/clock-advanced"],
    ),
];

/// The twins only the effect oracle sees: their records and the ledger say
/// exactly what a faithful desk's say, and only the store disagrees. They
/// are caught when the pack runs with [`run_options`].
pub const ORACLE_TWINS: [PythonTwin; 2] = [
    twin(
        "refusal-hits-store",
        Pack::Procedural,
        (
            PROCEDURAL_SEED,
            "blocked",
            "EffectsMatchOracle",
            "EffectsMatchOracle",
        ),
        WITH_BLOCKED,
    ),
    twin(
        "ledger-without-effect",
        Pack::Procedural,
        (
            PROCEDURAL_SEED,
            "draft probe",
            "EffectsMatchOracle",
            "EffectsMatchOracle",
        ),
        WITH_A_REFUND,
    ),
];

/// Every twin: those the main job runs, then those only the oracle sees.
pub fn all_twins() -> impl Iterator<Item = PythonTwin> {
    TWINS.into_iter().chain(ORACLE_TWINS)
}
