//! Every message the library sends or accepts validates against the committed
//! JSON Schema (`protocol/v1.schema.json`), and the schema refuses what the
//! protocol forbids.
#![cfg(unix)]

#[path = "process_support/schema.rs"]
mod schema;

use std::collections::BTreeSet;
use std::path::PathBuf;

use schema::Schema;
use serde_json::{json, Value};
use symfonic_evals::process::protocol::{decode, encode, ChildMessage, HarnessMessage};
use symfonic_evals::process::{python_interpreter, ProcessSpec};
use symfonic_evals::{
    run_pack, ApprovalResumePack, CapabilityEvidence, ExtensionToolPack, PackDefinition, Pause,
    ProcessTarget, PromptRequest, ResetRequest, ResolvedCall, ResumeRequest, ReviewAction,
    ReviewRequest, Role, RunOptions, StageOutcome, StageRecord, ToolCall, ToolOutcome, TurnError,
    TurnRecord, WitnessOutcome,
};

fn harness_messages() -> Vec<HarnessMessage> {
    vec![
        HarnessMessage::Hello {
            protocol_versions: vec![1],
            durable_dir: "/tmp/trial".into(),
            trial: 0,
            clock_offset_ms: 0,
        },
        HarnessMessage::Hello {
            protocol_versions: vec![1],
            durable_dir: "/tmp/trial".into(),
            trial: 1,
            clock_offset_ms: 90_061_000,
        },
        HarnessMessage::Prompt {
            id: 1,
            request: PromptRequest::new("c", "refund order 3")
                .with_state(json!({"region": "US", "tier": {"level": 2}})),
        },
        HarnessMessage::Prompt {
            id: 2,
            request: PromptRequest::new("c", "hello"),
        },
        HarnessMessage::Prompt {
            id: 4,
            request: PromptRequest::new("c", "refund order 1")
                .with_feedback(symfonic_evals::Feedback::Rejected),
        },
        HarnessMessage::Prompt {
            id: 7,
            request: PromptRequest::new("c-operator", "approve the refund procedure")
                .by(Role::Operator),
        },
        HarnessMessage::Resume {
            id: 8,
            request: ResumeRequest {
                conversation: "c".into(),
                question_id: Some("q-17".into()),
                token: "tok".into(),
                answer: json!({"approved": true}),
            },
        },
        HarnessMessage::Resume {
            id: 3,
            request: ResumeRequest {
                conversation: "c".into(),
                question_id: None,
                token: "tok".into(),
                answer: json!({"approved": true}),
            },
        },
        HarnessMessage::Review {
            id: 9,
            request: ReviewRequest {
                conversation: "c-operator".into(),
                action: ReviewAction::Approve {
                    procedure: "refund-rule".into(),
                    draft: "verify the account region".into(),
                    tool: "issue_refund".into(),
                    precondition: vec![json!({"path": "region", "op": "eq", "value": "US"})],
                },
            },
        },
        HarnessMessage::Review {
            id: 10,
            request: ReviewRequest {
                conversation: "c-operator".into(),
                action: ReviewAction::Amend {
                    procedure: "refund-rule".into(),
                    precondition: vec![json!({"path": "region", "op": "exists"})],
                },
            },
        },
        HarnessMessage::Review {
            id: 11,
            request: ReviewRequest {
                conversation: "c-operator".into(),
                action: ReviewAction::Revoke {
                    procedure: "refund-rule".into(),
                },
            },
        },
        HarnessMessage::Review {
            id: 12,
            request: ReviewRequest {
                conversation: "c-operator".into(),
                action: ReviewAction::Reject {
                    draft: "call track_shipment".into(),
                },
            },
        },
        HarnessMessage::Reset {
            id: 13,
            request: ResetRequest {
                conversation: "c".into(),
            },
        },
        HarnessMessage::LedgerResult {
            id: 3,
            key: "refund:3".into(),
            applied: false,
        },
        HarnessMessage::Shutdown,
    ]
}

fn child_messages() -> Vec<ChildMessage> {
    let everything = TurnRecord::builder()
        .answer("waiting")
        .model_input("recall: verify the account region")
        .paused(Pause::new("ask_user", true, "tok"))
        .tool_call(ToolCall::succeeded(
            "c1",
            "lookup",
            json!({"q": 1}),
            json!(null),
        ))
        .tool_call(ToolCall::failed("c2", "weather", json!({}), "no forecast"))
        .tool_call(ToolCall::refused(
            "c3",
            "issue_refund",
            json!({"order": 5}),
            "gate",
        ))
        .stage(StageRecord::new("gate", StageOutcome::Rejected).count("refused", 1))
        .stage(StageRecord::new("scrub", StageOutcome::Downgraded))
        .attribute("procedural_review", json!([["approved", "issue_refund"]]))
        .build();
    vec![
        ChildMessage::Ready {
            protocol_version: 1,
            capabilities: CapabilityEvidence::new()
                .capability("human")
                .with_trait("procedural-review")
                .operation("resume")
                .contributes("extensions", "weather"),
        },
        ChildMessage::LedgerApply {
            id: 4,
            key: "refund:4".into(),
            tool: None,
            arguments: None,
        },
        ChildMessage::LedgerApply {
            id: 4,
            key: "refund:4".into(),
            tool: Some("issue_refund".into()),
            arguments: None,
        },
        ChildMessage::LedgerApply {
            id: 4,
            key: "refund:4".into(),
            tool: Some("issue_refund".into()),
            arguments: Some(serde_json::json!({"order": 4, "reason": "late"})),
        },
        ChildMessage::TurnRecord {
            id: 4,
            record: everything,
        },
        ChildMessage::TurnRecord {
            id: 5,
            record: TurnRecord::builder().build(),
        },
        ChildMessage::TurnError {
            id: 6,
            error: TurnError::new("PauseTokenReplayedError", "spent"),
        },
        ChildMessage::TurnError {
            id: 7,
            error: TurnError::new("QuestionGone", "expired or spent").with_code("gone"),
        },
        ChildMessage::TurnError {
            id: 9,
            error: TurnError::new("UnhandledException", "ValueError").with_exception(
                serde_json::from_value(json!({
                    "type": "ValueError",
                    "qualified_name": "builtins.ValueError",
                    "frames": [
                        {"file": "desk.py", "line": 40, "function": "Desk.run_turn"},
                        {"file": "<site-packages>/app/parse.py", "line": 7, "function": "amount"}
                    ],
                    "frames_omitted": 3,
                    "message": "opted in",
                    "cause": {"type": "KeyError", "qualified_name": "builtins.KeyError", "frames": []}
                }))
                .unwrap(),
            ),
        },
        ChildMessage::Witness {
            id: 8,
            tool: "weather".into(),
            arguments: json!({"city": "Oslo"}),
            outcome: WitnessOutcome::failed("upstream 503"),
        },
        ChildMessage::TurnRecord {
            id: 9,
            record: TurnRecord::builder()
                .answer("asked")
                .tool_call(ToolCall::pending(
                    "c1",
                    "ask_user",
                    json!({"question": "ok?"}),
                ))
                .paused(
                    Pause::new("ask_user", true, "tok").asking(json!({"question": "ok?"}), "q-17"),
                )
                .build(),
        },
        ChildMessage::TurnRecord {
            id: 10,
            record: TurnRecord::builder()
                .answer("done")
                .resolved(ResolvedCall::new(
                    "c1",
                    ToolOutcome::Succeeded {
                        result: json!({"approved": true}),
                    },
                ))
                .build(),
        },
    ]
}

#[test]
fn every_message_the_harness_sends_validates() {
    let schema = Schema::load();
    for message in harness_messages() {
        let line = encode(&message);
        assert_eq!(line.last(), Some(&b'\n'));
        assert!(
            !line[..line.len() - 1].contains(&b'\n'),
            "one message per line"
        );
        let value: Value = serde_json::from_slice(&line).unwrap();
        schema
            .validate("harness_message", &value)
            .unwrap_or_else(|e| panic!("{value}: {e}"));
        assert!(schema.validate("child_message", &value).is_err(), "{value}");
    }
}

#[test]
fn every_message_the_harness_accepts_validates_and_round_trips() {
    let schema = Schema::load();
    for message in child_messages() {
        let value = serde_json::to_value(&message).unwrap();
        schema
            .validate("child_message", &value)
            .unwrap_or_else(|e| panic!("{value}: {e}"));
        assert!(
            schema.validate("harness_message", &value).is_err(),
            "{value}"
        );
        assert_eq!(decode(value.to_string().as_bytes()).unwrap(), message);
    }
}

#[test]
fn the_schema_refuses_what_the_protocol_forbids() {
    let schema = Schema::load();
    let child = [
        (
            json!({"type": "turn_record", "record": {"answer": ""}}),
            "required id",
        ),
        (
            json!({"type": "turn_record", "id": -1, "record": {"answer": ""}}),
            "/id: minimum",
        ),
        (
            json!({"type": "turn_record", "id": 1, "record": {"answer": "", "paused": true}}),
            "additional property paused",
        ),
        (
            json!({"type": "turn_record", "id": 1, "record": {"answer": "",
                "terminal": {"kind": "paused", "interaction": "ask_user", "resumable": true}}}),
            "required token",
        ),
        (
            json!({"type": "turn_record", "id": 1, "record": {"answer": "", "tool_calls": [
                {"id": "1", "name": "t", "arguments": {}, "outcome": {"status": "exploded"}}]}}),
            "/record/tool_calls/0/outcome",
        ),
        (
            json!({"type": "turn_record", "id": 1, "record": {"answer": "", "governance": [
                {"stage": "gate", "outcome": "maybe"}]}}),
            "/record/governance/0/outcome: enum",
        ),
        (
            json!({"type": "turn_error", "id": 1, "error": {"kind": "", "message": ""}}),
            "/error/kind: minLength",
        ),
        (
            json!({"type": "turn_error", "id": 1, "error": {"kind": "UnhandledException",
                "message": "ValueError", "exception": {"type": "ValueError",
                "qualified_name": "builtins.ValueError",
                "frames": [{"file": "desk.py", "line": 3, "function": "f", "locals": {}}]}}}),
            "additional property locals",
        ),
        (
            json!({"type": "ready", "protocol_version": 1,
                "capabilities": {"capabilities": ["a", "a"]}}),
            "uniqueItems",
        ),
        (json!({"type": "gossip"}), "/type: const"),
        (
            json!({"type": "turn_error", "id": 1, "error": {"kind": "K", "message": "",
                "code": "x".repeat(65)}}),
            "/error/code: maxLength",
        ),
        (
            json!({"type": "witness", "id": 1, "tool": "t", "arguments": {},
                "outcome": {"status": "pending"}}),
            "/outcome",
        ),
        (
            json!({"type": "turn_record", "id": 1, "record": {"answer": "",
                "terminal": {"kind": "paused", "interaction": "ask_user", "resumable": true,
                    "token": "t", "question_id": ""}}}),
            "question_id: minLength",
        ),
    ];
    for (value, reason) in child {
        let why = schema
            .validate("child_message", &value)
            .expect_err("accepted");
        assert!(why.contains(reason), "{value}: {why} (expected {reason})");
    }
    let harness = json!({"type": "shutdown", "now": true});
    assert!(schema.validate("harness_message", &harness).is_err());
}

/// Runs the packs against the Python example through a relay that logs every
/// line, then validates the real traffic in both directions.
#[test]
fn live_traffic_with_the_python_companion_validates_in_both_directions() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("traffic.log");
    let spec = ProcessSpec::new(python_interpreter("python3"))
        .arg(root.join("tests/process_children/tee.py"))
        .arg(&log)
        .arg("--")
        .arg(python_interpreter("python3"))
        .arg(root.join("../examples/helpdesk-py/helpdesk.py"));
    let approval = PackDefinition::ApprovalResume(ApprovalResumePack {
        pause_prompt: "escalate ticket 7 to a supervisor".into(),
        answer: json!({"approved": true}),
        interaction_tool: "ask_user".into(),
        ..ApprovalResumePack::default()
    });
    let extension = PackDefinition::ExtensionTool(ExtensionToolPack {
        prompt: "what is the weather in Lisbon".into(),
        tool_name: "weather_lookup".into(),
        ..ExtensionToolPack::default()
    });
    for (name, pack) in [("tee.approval", approval), ("tee.extension", extension)] {
        let spec = spec.clone();
        let run = run_pack(name, &pack, &RunOptions::default(), move |ctx| {
            ProcessTarget::spawn(ctx, &spec).unwrap()
        });
        run.assert_passed();
    }
    // A refund turn exercises the ledger round trip.
    let ctx = symfonic_evals::TargetContext::fresh(0).unwrap();
    let mut target = ProcessTarget::spawn(&ctx, &spec).unwrap();
    let request = PromptRequest::new("c", "refund order 3").with_state(json!({"region": "US"}));
    symfonic_evals::Target::run_turn(&mut target, &request).unwrap();
    // An operator turn carries its role.
    let review = PromptRequest::new("c", "approve the refund procedure").by(Role::Operator);
    symfonic_evals::Target::run_turn(&mut target, &review).unwrap();
    drop(target);

    let schema = Schema::load();
    let mut seen = BTreeSet::new();
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let (direction, body) = line.split_at(2);
        let value: Value = serde_json::from_str(body).unwrap();
        let definition = if direction == "> " {
            "harness_message"
        } else {
            "child_message"
        };
        schema
            .validate(definition, &value)
            .unwrap_or_else(|e| panic!("{definition}: {e}"));
        if direction == "> " {
            serde_json::from_value::<HarnessMessage>(value.clone()).unwrap();
        } else {
            decode(body.as_bytes()).unwrap();
        }
        seen.insert(format!("{direction}{}", value["type"].as_str().unwrap()));
        if value["request"]["role"] == "operator" {
            seen.insert("> operator prompt".into());
        }
    }
    let expected: BTreeSet<String> = [
        "> hello",
        "> prompt",
        "> operator prompt",
        "> resume",
        // The Python desk declares `reset`, so the approval pack resets.
        "> reset",
        "> ledger_result",
        "> shutdown",
        "< ready",
        "< ledger_apply",
        "< witness",
        "< turn_record",
        "< turn_error",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(seen, expected);
}
