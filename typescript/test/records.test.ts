import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Capabilities,
  Pause,
  RecordError,
  ResolvedCall,
  Stage,
  ToolCall,
  TurnFailure,
  PRECOMPILED,
  TurnRecord,
  compileSchema,
  editDecisions,
  schemaViolation,
  wire,
} from "symfonic-evals-protocol";

const SECRET = "sk live 4242!";

function turnRecord(record: TurnRecord): Record<string, unknown> {
  return wire.answer(1, record);
}

test("a full record is the harness's wire shape and validates against the schema", () => {
  const record = new TurnRecord({
    answer: "paused",
    modelInput: "system: ...",
    toolCalls: [
      ToolCall.succeeded("c1", "lookup", { id: 1 }, { ok: true }),
      ToolCall.failed("c2", "lookup", {}, "upstream down"),
      ToolCall.refused("c3", "issue_refund", { order: 5 }, "precondition"),
      ToolCall.pending("c4", "ask_user", { question: "ok?" }),
    ],
    resolved: [ResolvedCall.succeeded("c0", { approved: true })],
    governance: [new Stage("precondition", "rejected", { checked: 1, refused: 1 })],
    attributes: { resume_outcome: "resumed" },
    pause: new Pause("ask_user", true, "tok", { question: "ok?" }, "q-1"),
  });
  const message = turnRecord(record);
  assert.equal(schemaViolation("child_message", message), undefined);
  assert.deepEqual((message.record as Record<string, unknown>).terminal, {
    kind: "paused",
    interaction: "ask_user",
    resumable: true,
    token: "tok",
    question: { question: "ok?" },
    question_id: "q-1",
  });
  const empty = turnRecord(new TurnRecord()).record as Record<string, unknown>;
  assert.deepEqual(empty, {
    answer: "",
    terminal: { kind: "completed" },
    tool_calls: [],
    model_input: "",
    governance: [],
    attributes: {},
  });
});

test("a pause names the held calls a person may edit, and a resolved call the arguments it ran with", () => {
  const record = new TurnRecord({
    toolCalls: [ToolCall.pending("c1", "issue_refund", { order: 5, amount: 200 })],
    pause: new Pause("issue_refund", true, "tok", undefined, undefined, ["c1"]),
  });
  const paused = turnRecord(record);
  assert.equal(schemaViolation("child_message", paused), undefined);
  assert.deepEqual(((paused.record as Record<string, unknown>).terminal as Record<string, unknown>).editable, ["c1"]);
  const resumed = turnRecord(
    new TurnRecord({ resolved: [ResolvedCall.succeeded("c1", "done", { order: 5, amount: 201 })] }),
  );
  assert.equal(schemaViolation("child_message", resumed), undefined);
  assert.deepEqual((resumed.record as Record<string, unknown>).resolved, [
    { id: "c1", outcome: { status: "succeeded", result: "done" }, arguments: { order: 5, amount: 201 } },
  ]);
  const edit = { decisions: [{ type: "edit", edited_action: { name: "issue_refund", args: { amount: 201 } } }] };
  assert.equal(editDecisions(edit)?.[0]?.type, "edit");
  assert.equal(editDecisions({ approved: true }), undefined);
  assert.equal(editDecisions({ decisions: [{ type: "maybe" }] }), undefined);
});

test("capabilities are sorted lists, and contributing a tool declares its capability", () => {
  const caps = new Capabilities().operation("resume").capability("tools").trait("context-clock").contributes("extensions", "weather_lookup");
  assert.deepEqual(caps.toJSON(), {
    capabilities: ["extensions", "tools"],
    traits: ["context-clock"],
    operations: ["resume"],
    contributed_tools: { extensions: ["weather_lookup"] },
  });
  assert.equal(schemaViolation("child_message", wire.ready(caps.toJSON())), undefined);
});

test("what the schema forbids fails in the deployment's code, typed, naming the field", () => {
  assert.throws(() => turnRecord(new TurnRecord({ toolCalls: [ToolCall.pending("c", "ask_user", {})] })), (e) => {
    assert.ok(e instanceof RecordError);
    assert.equal(e.field, "tool_calls");
    return true;
  });
  assert.throws(() => new Pause("ask_user", true, "t", null, ""), RecordError);
  assert.throws(() => new Pause("ask_user", true, "t", null, "q".repeat(257)), RecordError);
  assert.throws(() => new Stage("s", "fine" as never), RecordError);
  assert.throws(() => new Stage("s", "passed", { checked: -1 }), RecordError);
  assert.throws(() => new Stage("s", "passed", { checked: 1.5 }), RecordError);
  assert.throws(() => new TurnFailure(""), RecordError);
  assert.throws(() => new TurnFailure("Kind", "", "has space"), RecordError);
  assert.throws(() => new TurnFailure("Kind", "", "x".repeat(65)), RecordError);
  assert.throws(() => ToolCall.failed("c", "t", {}, 42 as never), RecordError);
  assert.throws(() => new Capabilities().capability(""), RecordError);
  // A value JSON cannot carry is refused, not turned into null.
  assert.throws(() => wire.Channel.encode(turnRecord(new TurnRecord({ attributes: { n: NaN } }))), RecordError);
  assert.throws(() => wire.Channel.encode(turnRecord(new TurnRecord({ attributes: { n: 1n as never } }))), RecordError);
});

test("no error quotes the value it refused", () => {
  const attempts: Array<() => unknown> = [
    () => new TurnFailure("Kind", "", SECRET),
    () => new Pause("ask_user", true, "t", null, SECRET.repeat(40)),
    () => new Stage(SECRET, SECRET as never),
    () => wire.Channel.encode({ type: "turn_record", id: 1, record: { answer: SECRET, [SECRET]: SECRET } }),
    () => wire.Channel.encode({ type: "witness", id: 1, tool: SECRET, arguments: {}, outcome: { status: SECRET } }),
    () => wire.Channel.encode({ type: "turn_error", id: 1, error: { kind: "K", message: SECRET, code: SECRET.repeat(9) } }),
    () => wire.ledgerApply(1, 42 as never, SECRET),
  ];
  for (const attempt of attempts) {
    assert.throws(attempt, (error: Error) => {
      assert.ok(error instanceof RecordError, error.name);
      assert.ok(!error.message.includes(SECRET), error.message);
      assert.ok(!error.message.includes("4242"), error.message);
      return true;
    });
  }
});

test("a turn failure answers with its kind and code; anything else with its type's name only", () => {
  const typed = wire.failure(3, new TurnFailure("PauseTokenReplayedError", "already redeemed", "pause.replayed"));
  assert.deepEqual(typed, {
    type: "turn_error",
    id: 3,
    error: { kind: "PauseTokenReplayedError", message: "already redeemed", code: "pause.replayed" },
  });
  const untyped = wire.failure(4, new RangeError(`state held ${SECRET}`));
  const { exception, ...named } = untyped.error as { exception: { type: string; qualified_name: string; frames: { file: string; function: string }[] } };
  assert.deepEqual(named, { kind: "UnhandledException", message: "RangeError" });
  assert.equal(exception.type, "RangeError");
  assert.equal(exception.qualified_name, "RangeError");
  assert.ok(exception.frames.length > 0);
  for (const frame of exception.frames) assert.ok(!frame.file.startsWith("/") && !frame.file.startsWith("file:"), frame.file);
  assert.ok(!JSON.stringify(untyped).includes("4242"), "no message");
  assert.equal(schemaViolation("child_message", untyped), undefined);
});

test("a typed failure carries its cause's trace; messages only when the adopter opts in", () => {
  class LookupFailed extends Error {}
  const cause = new LookupFailed(`no account ${SECRET}`);
  const typed = wire.failure(5, new TurnFailure("Declined", "no such account", "account.unknown", { cause }));
  const error = typed.error as { kind: string; code: string; exception: { type: string; message?: string } };
  assert.equal(error.kind, "Declined");
  assert.equal(error.exception.type, "LookupFailed");
  assert.equal(error.exception.message, undefined);
  assert.ok(!JSON.stringify(typed).includes("4242"));
  assert.equal(schemaViolation("child_message", typed), undefined);
  const opted = wire.failure(6, new RangeError(`state held ${SECRET}`), true);
  assert.equal((opted.error as { exception: { message: string } }).exception.message, `state held ${SECRET}`);
  assert.equal(schemaViolation("child_message", opted), undefined);
  // A thrown value that is no Error has no trace to give.
  assert.deepEqual(wire.failure(7, "a string").error, { kind: "UnhandledException", message: "string" });
});

test("the validators the build compiled are in use, and agree with the schema compiled here", () => {
  assert.equal(PRECOMPILED, true);
  const here = compileSchema();
  const samples: Array<["harness_message" | "child_message", unknown]> = [
    ["harness_message", { type: "hello", protocol_versions: [1], durable_dir: "/d", trial: 0, clock_offset_ms: 5 }],
    ["harness_message", { type: "hello", protocol_versions: [], durable_dir: "/d", trial: 0 }],
    ["harness_message", { type: "resume", id: 1, request: { conversation: "c", token: "t", answer: null } }],
    ["harness_message", { type: "resume", id: 1, request: { conversation: "c", token: "t" } }],
    ["harness_message", { type: "review", id: 1, request: { conversation: "c", action: "amend", procedure: "p", precondition: [] } }],
    ["harness_message", { type: "review", id: 1, request: { conversation: "c", action: "amend", procedure: "" , precondition: [] } }],
    ["child_message", turnRecord(new TurnRecord({ pause: new Pause("ask_user", true, "t", null, "q") }))],
    ["child_message", { type: "turn_record", id: 1, record: { answer: "", terminal: { kind: "paused", interaction: "i", resumable: true, token: "t", question_id: "" } } }],
    ["child_message", { type: "ledger_apply", id: 1, key: "k", tool: "" }],
    ["child_message", { type: "turn_error", id: 1, error: { kind: "K", message: "", code: "x".repeat(65) } }],
    ["child_message", { type: "ready", protocol_version: 1, capabilities: { capabilities: ["a", "a"] } }],
  ];
  for (const [definition, value] of samples) {
    assert.equal(schemaViolation(definition, value) === undefined, here[definition](value), JSON.stringify(value));
  }
});
