//! Every honest variant of the help desk passes every pack it is meant
//! for, with the pack's default arguments (the seed scenario and every
//! probe): the Rust desk in process, and the Python desk over the process
//! protocol with the restarts real process restarts. A failure names the
//! desk, the variant, the pack, the scenario, the step and the assertion;
//! every failure of every variant is listed before the test fails, so one
//! run shows them all.

use helpdesk::honest::{complaints, run_python, run_rust};
use helpdesk::{Helpdesk, Variant};
use serde_json::{json, Value};
use symfonic_evals::{
    EditDecision, EditedAction, PackDefinition, PromptRequest, ResetRequest, ResumeRequest, Role,
    Target, TargetContext, ToolCall, ToolOutcome, TurnRecord,
};
use symfonic_evals_e2e::side_by_side;

#[test]
fn every_rust_variant_passes_every_pack_it_is_meant_for() {
    let runs = Variant::ALL
        .iter()
        .flat_map(|&variant| variant.packs().iter().map(move |&pack| (variant, pack)));
    let failed: Vec<String> = side_by_side(runs, |(variant, pack)| {
        complaints("helpdesk", variant, &run_rust(variant, pack))
    })
    .concat();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[cfg(unix)]
#[test]
fn every_python_variant_passes_every_pack_it_is_meant_for_over_the_protocol() {
    let runs = Variant::ALL.iter().flat_map(|&variant| {
        variant
            .python_packs()
            .iter()
            .map(move |&pack| (variant, pack))
    });
    let failed: Vec<String> = side_by_side(runs, |(variant, pack)| {
        complaints("helpdesk-py", variant, &run_python(variant, pack))
    })
    .concat();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// The Python desk offers exactly the variants the list says it has, under
/// the same names, so one list declares both desks' variants.
#[cfg(unix)]
#[test]
fn the_python_desk_has_exactly_the_listed_variants() {
    let out = std::process::Command::new("python3")
        .arg(helpdesk::python::desk_dir().join("helpdesk.py"))
        .arg("--list-variants")
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{out:?}");
    let offered: std::collections::BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let listed: std::collections::BTreeSet<String> = Variant::ALL
        .iter()
        .filter(|v| !v.python_packs().is_empty())
        .map(|v| v.name().to_owned())
        .collect();
    assert_eq!(offered, listed);
}

// A variant whose switch did nothing would pass every pack as the
// reference does, and prove nothing: each variant's shape must show in
// what its desk does.

fn turn(desk: &mut dyn Target, prompt: &str) -> TurnRecord {
    desk.run_turn(&PromptRequest::new("shape", prompt))
        .expect("the turn runs")
}

fn answer(desk: &mut dyn Target, paused: &TurnRecord, approved: bool) -> TurnRecord {
    let pause = paused.pause().expect("paused");
    desk.resume(&ResumeRequest {
        conversation: "shape".into(),
        question_id: pause.question_id.clone(),
        token: pause.token.clone(),
        answer: json!({ "approved": approved }),
    })
    .expect("resumes")
}

fn approve(desk: &mut dyn Target, paused: &TurnRecord) -> TurnRecord {
    answer(desk, paused, true)
}

/// The tools whose effects the ledger applied, in order.
fn applied_by(ctx: &TargetContext) -> Vec<String> {
    ctx.ledger()
        .events_since(0)
        .into_iter()
        .filter(|e| e.applied)
        .map(|e| e.tool.unwrap_or_default())
        .collect()
}

/// The prompts and names a desk's shape is checked with.
struct Desk<'a> {
    /// Pauses before its gated action.
    gated: &'a str,
    /// The gated action's tool.
    gated_tool: &'a str,
    /// Calls the extension's tool.
    lookup: &'a str,
    /// The extension's tool.
    lookup_tool: &'a str,
    /// The extension tool's defaulted argument, spelled out.
    default: (&'a str, Value),
    /// A demonstration of the procedural pack's lesson.
    demonstration: &'a str,
    /// Whether the desk's store still holds the pause a token was issued for.
    pause_on_file: fn(&std::path::Path, &str) -> bool,
    /// The desk's procedural pack, whose prompts teach, approve and refuse.
    procedural: PackDefinition,
    /// A new instance of the desk in the variant's configuration over the
    /// same durable directory: the desk as it comes back from a restart.
    restarted: fn(&TargetContext, Variant) -> Box<dyn Target>,
}

/// Whether the Rust desk's store holds the pause of `token`.
fn rust_pause_on_file(durable_dir: &std::path::Path, token: &str) -> bool {
    let store = helpdesk::store::Store::open_in(durable_dir).expect("the store");
    store.token(token).expect("the store reads").is_some()
}

/// Whether the Python desk's store holds the pause of `token`.
#[cfg(unix)]
fn python_pause_on_file(durable_dir: &std::path::Path, token: &str) -> bool {
    helpdesk::python::pause_on_file(durable_dir, token).expect("the store reads")
}

/// What every variant must visibly do, given a desk in that configuration:
/// the prompts of its gated action and of its extension tool, and the
/// effect oracle over its store.
fn shows_its_shape(
    variant: Variant,
    desk: &mut dyn Target,
    ctx: &TargetContext,
    shape: &Desk<'_>,
    effects: fn(&std::path::Path) -> Result<u64, String>,
) {
    let Desk {
        gated,
        gated_tool,
        lookup,
        lookup_tool,
        ref default,
        demonstration,
        pause_on_file,
        ref procedural,
        restarted,
    } = *shape;
    let name = variant.name();
    match variant {
        Variant::JwtPauseTokens => {
            let paused = turn(desk, gated);
            let token = &paused.pause().expect("paused").token;
            assert!(token.starts_with("eyJ"), "{name}: {token}");
            assert_eq!(token.split('.').count(), 3, "{name}: {token}");
            assert!(!approve(desk, &paused).tool_calls().is_empty());
        }
        Variant::TimeOrderedPauseTokens => {
            // Two tokens issued close together share their clock's
            // leading characters and nothing after the random part starts.
            let first = turn(desk, gated).pause().expect("paused").token.clone();
            let paused = turn(desk, gated);
            let second = &paused.pause().expect("paused").token;
            let (uuid7, ulid) = (first.len() == 36, first.len() == 26);
            assert!(uuid7 || ulid, "{name}: {first}");
            if uuid7 {
                assert_eq!(first.as_bytes()[14], b'7', "{name}: {first}");
            }
            assert_eq!(first[..6], second[..6], "{name}: {first} {second}");
            assert_ne!(
                first[first.len() - 8..],
                second[second.len() - 8..],
                "{name}"
            );
            assert!(!approve(desk, &paused).tool_calls().is_empty());
        }
        Variant::ResetIsNewSession => {
            // A new session: the old one's pause stays in the store, out
            // of reach of its token; the new session pauses and redeems.
            let before = turn(desk, gated);
            let pause = before.pause().expect("paused").clone();
            desk.reset(&ResetRequest {
                conversation: "shape".into(),
            })
            .expect("resets");
            assert!(
                pause_on_file(ctx.durable_dir(), &pause.token),
                "{name}: the old session's pause is kept"
            );
            let stale = desk.resume(&ResumeRequest {
                conversation: "shape".into(),
                question_id: pause.question_id.clone(),
                token: pause.token.clone(),
                answer: json!({ "approved": true }),
            });
            assert!(stale.is_err(), "{name}: the old token is refused");
            let paused = turn(desk, gated);
            assert!(!approve(desk, &paused).tool_calls().is_empty());
        }
        Variant::AsksAgainAfterRestart => {
            // Carried out once: the same request again in the conversation
            // is answered as done, asking nobody and attempting nothing.
            let paused = turn(desk, gated);
            approve(desk, &paused);
            let attempts = ctx.ledger().events_since(0).len();
            let again = turn(desk, gated);
            assert!(again.pause().is_none(), "{name}: asked again");
            assert!(again.tool_calls().is_empty(), "{name}: ran again");
            assert_eq!(ctx.ledger().events_since(0).len(), attempts, "{name}");
            // Restarted, the desk has forgotten: it asks again, and the
            // approval finds the effect applied before.
            desk.kill();
            let mut desk = restarted(ctx, variant);
            let asked = turn(&mut *desk, gated);
            assert!(asked.pause().is_some(), "{name}: not asked after a restart");
            approve(&mut *desk, &asked);
            assert_eq!(applied_by(ctx), [gated_tool], "{name}");
        }
        Variant::RandomCallIds => {
            let record = turn(desk, lookup);
            let id = &record.tool_calls()[0].id;
            assert!(id.starts_with("call_") && id.len() == 41, "{name}: {id}");
        }
        Variant::LooksUpBeforeActing => {
            let paused = turn(desk, gated);
            let names: Vec<&str> = paused
                .tool_calls()
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            assert!(names[0].starts_with("lookup_"), "{name}: {names:?}");
            assert_eq!(names.len(), 2, "{name}: {names:?}");
        }
        Variant::OutboxAsJsonLines => {
            let paused = turn(desk, gated);
            approve(desk, &paused);
            let lines = std::fs::read_to_string(ctx.durable_dir().join("outbox.jsonl"))
                .expect("the outbox file");
            assert_eq!(lines.lines().count(), 1, "{name}: {lines}");
            assert_eq!(effects(ctx.durable_dir()), Ok(1), "{name}");
        }
        Variant::DefaultedToolArgument => {
            let record = turn(desk, lookup);
            let call = &record.tool_calls()[0];
            assert_eq!(call.name, lookup_tool);
            let (argument, value) = default;
            assert_eq!(
                call.arguments.get(*argument),
                Some(value),
                "{name}: {call:?}"
            );
        }
        Variant::AsciiEscapedResults => {
            let record = turn(desk, lookup);
            assert!(
                record.model_input().contains(r"21 \u00b0C"),
                "{name}: {}",
                record.model_input()
            );
        }
        Variant::NoticeAtPause => {
            let paused = turn(desk, gated);
            assert!(paused.pause().is_some(), "{name}");
            assert_eq!(applied_by(ctx), ["post_notice"], "{name}");
            approve(desk, &paused);
            assert_eq!(applied_by(ctx), ["post_notice", gated_tool], "{name}");
            assert_eq!(effects(ctx.durable_dir()), Ok(2), "{name}");
        }
        Variant::NoticeOnGovernedCalls => {
            // Held: one notice; run: the action, then a notice of its own.
            let paused = turn(desk, gated);
            assert!(paused.pause().is_some(), "{name}");
            assert_eq!(applied_by(ctx), ["post_notice"], "{name}");
            approve(desk, &paused);
            assert_eq!(
                applied_by(ctx),
                ["post_notice", gated_tool, "post_notice"],
                "{name}"
            );
            assert_eq!(effects(ctx.durable_dir()), Ok(3), "{name}");
        }
        Variant::NotifyOnDenial => {
            let paused = turn(desk, gated);
            answer(desk, &paused, false);
            assert_eq!(applied_by(ctx), ["notify_requester"], "{name}");
            assert_eq!(effects(ctx.durable_dir()), Ok(1), "{name}");
        }
        Variant::ApprovalOnTheCall | Variant::EditRefused => {
            let paused = turn(desk, gated);
            let pause = paused.pause().expect("paused");
            assert_eq!(pause.interaction, gated_tool, "{name}");
            let pending: Vec<&ToolCall> = paused
                .tool_calls()
                .iter()
                .filter(|c| c.is_pending())
                .collect();
            assert_eq!(pending.len(), 1, "{name}");
            assert_eq!(pending[0].name, gated_tool, "{name}");
            // The held call may be edited.
            assert_eq!(pause.editable, [pending[0].id.clone()], "{name}");
            assert!(applied_by(ctx).is_empty(), "{name}");
            if variant == Variant::ApprovalOnTheCall {
                approve(desk, &paused);
                assert_eq!(applied_by(ctx), [gated_tool], "{name}");
                return;
            }
            // An edit of the customer is refused, and nothing cancelled.
            let mut arguments = pending[0].arguments.clone();
            arguments["customer"] = json!(43);
            let edit = EditDecision::answer(vec![EditDecision::Edit {
                edited_action: EditedAction {
                    name: gated_tool.to_owned(),
                    args: arguments,
                },
            }]);
            let record = desk
                .resume(&ResumeRequest {
                    conversation: "shape".into(),
                    question_id: pause.question_id.clone(),
                    token: pause.token.clone(),
                    answer: edit,
                })
                .expect("a refusal is a record");
            assert!(
                matches!(record.resolved()[0].outcome, ToolOutcome::Refused { .. }),
                "{name}: {:?}",
                record.resolved()
            );
            assert!(applied_by(ctx).is_empty(), "{name}");
        }
        Variant::SameKeyRetries => {
            let paused = turn(desk, gated);
            approve(desk, &paused);
            let counts = ctx.ledger().counts();
            assert_eq!(
                (counts.attempts, counts.effects, counts.duplicates),
                (2, 1, 1),
                "{name}"
            );
        }
        Variant::InvoiceBeforeCancelling => {
            // Two effects in one turn, the gated one second (the Rust
            // desk's final invoice, the Python desk's supervisor brief).
            let paused = turn(desk, gated);
            approve(desk, &paused);
            let applied = applied_by(ctx);
            assert_eq!(applied.len(), 2, "{name}: {applied:?}");
            assert_ne!(applied[0], gated_tool, "{name}: {applied:?}");
            assert_eq!(applied[1], gated_tool, "{name}: {applied:?}");
            assert_eq!(effects(ctx.durable_dir()), Ok(2), "{name}");
        }
        Variant::RejectedAsGuardrail => {
            // Rejected twice: kept as one guardrail, nothing learned.
            for _ in 0..2 {
                let rejected = PromptRequest::new("shape", demonstration)
                    .with_feedback(symfonic_evals::Feedback::Rejected);
                let record = desk.run_turn(&rejected).expect("the turn runs");
                assert_eq!(
                    record.attributes().get("procedural_review"),
                    Some(&json!([["guardrail", ""]])),
                    "{name}"
                );
                assert_eq!(
                    record.attributes().get("procedural_promoted"),
                    Some(&json!(0)),
                    "{name}"
                );
            }
        }
        Variant::RunningTotals => {
            // One demonstration: counted in the store, nothing promoted yet.
            let record = turn(desk, demonstration);
            assert_eq!(
                record.attributes().get("procedural_promoted"),
                Some(&json!(0)),
                "{name}"
            );
            // Each desk's store holds the totals: the Python desk's
            // escalates tickets.
            let counted = if gated_tool == "escalate_ticket" {
                helpdesk::python::lessons_totalled(ctx.durable_dir()).expect("totals")
            } else {
                helpdesk::store::Store::open_in(ctx.durable_dir())
                    .and_then(|store| store.support_counted())
                    .expect("the store's totals")
            };
            assert!(counted >= 1, "{name}");
        }
        Variant::GatedAliasTool => {
            // A request worded "express" goes to the second tool, which
            // applies the refund's effect (the packs show the gate judges
            // it under the refund's procedures).
            let record = turn(desk, "express refund order 9");
            let names: Vec<&str> = record
                .tool_calls()
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            assert_eq!(names, ["express_refund"], "{name}");
            assert_eq!(applied_by(ctx), ["express_refund"], "{name}");
        }
        Variant::LogsRefundRequests => {
            // Taught, drafted, approved, then refused: the refused request
            // is logged, and nothing else is applied.
            let PackDefinition::Procedural(pack) = procedural else {
                panic!("{name}: the desk's procedural pack");
            };
            for prompt in &pack.demonstrations {
                turn(desk, prompt);
            }
            let draft = PromptRequest::new("shape", &pack.draft_prompt)
                .with_state(pack.draft_state.clone());
            desk.run_turn(&draft).expect("the draft probe runs");
            let review = PromptRequest::new("shape", &pack.review_prompt).by(Role::Operator);
            desk.run_turn(&review).expect("the review runs");
            let (applied, stored) = (applied_by(ctx).len(), effects(ctx.durable_dir()));
            let blocked = PromptRequest::new("shape", &pack.blocked_prompt)
                .with_state(pack.blocked_state.clone());
            let record = desk.run_turn(&blocked).expect("the turn runs");
            let refunds: Vec<bool> = record
                .tool_calls()
                .iter()
                .filter(|c| c.name == pack.action_tool)
                .map(ToolCall::is_success)
                .collect();
            assert_eq!(refunds, [false], "{name}: the refund is refused");
            assert_eq!(applied_by(ctx)[applied..], ["log_refund_request"], "{name}");
            assert_eq!(effects(ctx.durable_dir()), stored.map(|n| n + 1), "{name}");
        }
        Variant::ExtraSystemMessage => {
            let record = turn(desk, lookup);
            let systems = record
                .model_input()
                .lines()
                .filter(|l| l.starts_with("system:"))
                .count();
            assert_eq!(systems, 2, "{name}: {}", record.model_input());
        }
    }
}

#[test]
fn every_rust_variant_is_switched_on() {
    for &variant in Variant::ALL {
        if variant.packs().is_empty() {
            continue;
        }
        let ctx = TargetContext::fresh(0).expect("context");
        let mut desk = Helpdesk::open_variant(&ctx, variant);
        shows_its_shape(
            variant,
            &mut desk,
            &ctx,
            &Desk {
                gated: "cancel the subscription of customer 42",
                gated_tool: "cancel_subscription",
                lookup: "where is the parcel for order 7?",
                lookup_tool: "track_shipment",
                default: ("detail", json!("summary")),
                demonstration: "refund order 1",
                pause_on_file: rust_pause_on_file,
                procedural: helpdesk::packs::definition(helpdesk::Pack::Procedural),
                restarted: |ctx, variant| Box::new(Helpdesk::open_variant(ctx, variant)),
            },
            helpdesk::store::effects_in_store,
        );
    }
}

#[cfg(unix)]
#[test]
fn every_python_variant_is_switched_on() {
    for &variant in Variant::ALL {
        if variant.python_packs().is_empty() {
            continue;
        }
        let ctx = TargetContext::fresh(0).expect("context");
        let mut desk =
            helpdesk::python::start(&ctx, &helpdesk::python::variant_spec(variant.name()));
        shows_its_shape(
            variant,
            &mut desk,
            &ctx,
            &Desk {
                gated: "escalate ticket 7 to a supervisor",
                gated_tool: "escalate_ticket",
                lookup: "what is the weather in Lisbon",
                lookup_tool: "weather_lookup",
                default: ("units", json!("metric")),
                demonstration: "walk me through refunding order 1: verify the account region, then issue the refund",
                pause_on_file: python_pause_on_file,
                procedural: helpdesk::python::definition(helpdesk::Pack::Procedural),
                restarted: |ctx, variant| {
                    let spec = helpdesk::python::variant_spec(variant.name());
                    Box::new(helpdesk::python::start(ctx, &spec))
                },
            },
            helpdesk::python::effects,
        );
    }
}

/// The shapes a pack argument exists for pass because of the argument:
/// judged with the reference's arguments, the same desks fail.
#[test]
fn the_arguments_a_variant_is_judged_with_are_what_let_it_pass() {
    use helpdesk::twins::Pack;
    use symfonic_evals::{run_pack, Verdict};
    let judged = [
        (Variant::SameKeyRetries, Pack::ApprovalResume),
        (Variant::ApprovalOnTheCall, Pack::ApprovalResume),
        (Variant::SameKeyRetries, Pack::ExactlyOnce),
    ];
    for (variant, pack) in judged {
        let definition = helpdesk::packs::definition(pack);
        let run = run_pack(
            &format!(
                "helpdesk::honest::{}::reference-arguments::{}",
                variant.name(),
                definition.kind().name()
            ),
            &definition,
            &helpdesk::packs::run_options(),
            move |ctx| Helpdesk::open_variant(ctx, variant),
        );
        assert_eq!(*run.verdict(), Verdict::Failed, "{}", variant.name());
        // With no crash the exact policy has no room for the second
        // delivery: the uncrashed run fails, before any experiment.
        if pack == Pack::ExactlyOnce {
            let first = run.first_failure().expect("it failed");
            assert_eq!(
                (first.step_label.as_str(), first.assertion.as_str()),
                ("learn resume", "KeysNotShared"),
                "{}",
                run.render()
            );
        }
    }
}
