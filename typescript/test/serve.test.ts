import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Capabilities,
  Deployment,
  ProtocolError,
  ToolCall,
  TurnFailure,
  TurnRecord,
  effects,
  nowMs,
  witnessed,
  type PromptRequest,
  type ResetRequest,
  type ResumeRequest,
  type ReviewRequest,
  type Turn,
} from "symfonic-evals-protocol";

import { inProcess } from "./harness.js";

const SECRET = "sk live 4242!";

const lookup = witnessed("lookup", async (args: { city: string }) => {
  if (args.city === "nowhere") throw new Error("no such city");
  return { city: args.city, forecast: "sunny" };
});

/** A deployment that exercises every part of the server. */
class Probe extends Deployment {
  readonly seen: string[] = [];

  override capabilities(): Capabilities {
    return new Capabilities().capability("tools").operation("resume").operation("review");
  }

  override async runTurn(request: PromptRequest, turn: Turn): Promise<TurnRecord> {
    this.seen.push(`${request.role}:${request.prompt}`);
    switch (request.prompt) {
      case "effect": {
        // Two concurrent tool bodies: their round trips must not interleave.
        const [first, second] = await Promise.all([turn.ledgerApply("k:1", "t"), effects.apply("k:2")]);
        const again = await turn.ledgerApply("k:1", "t");
        return new TurnRecord({ answer: "done", attributes: { first, second, again } });
      }
      case "witness": {
        const result = await lookup({ city: "Lisbon" });
        await assert.rejects(lookup({ city: "nowhere" }));
        return new TurnRecord({ toolCalls: [ToolCall.succeeded("w1", "lookup", { city: "Lisbon" }, result)] });
      }
      case "typed":
        throw new TurnFailure("NoSuchOrder", "no such order", "order.unknown");
      case "crash":
        throw new Error(`the state held ${JSON.stringify(request.state)}`);
      case "print":
        console.log("a stray print");
        process.stdout.write("a stray write\n");
        return new TurnRecord({ answer: "printed" });
      case "clock":
        return new TurnRecord({ attributes: { now: nowMs() } });
      case "state":
        return new TurnRecord({ attributes: { state: request.state ?? null } });
      case "feedback":
        return new TurnRecord({ attributes: { feedback: request.feedback ?? null } });
      default:
        return new TurnRecord({ answer: `echo ${request.prompt}` });
    }
  }

  override async resume(request: ResumeRequest): Promise<TurnRecord> {
    return new TurnRecord({ attributes: { token: request.token, answer: request.answer, qid: request.questionId ?? null } });
  }

  readonly reviews: ReviewRequest[] = [];

  override async reviewProcedure(request: ReviewRequest): Promise<TurnRecord> {
    this.reviews.push(request);
    return new TurnRecord({ attributes: { action: request.action, procedure: request.procedure } });
  }
}

test("a session: handshake, turns of every kind, the ledger and witnesses, then shutdown", async () => {
  const errors: unknown[] = [];
  let deployment: Probe | undefined;
  const session = inProcess((dir) => (deployment = new Probe(dir)), { onError: (e) => errors.push(e) });
  const ready = await session.hello({ protocol_versions: [1, 2], later_field: true });
  assert.deepEqual(ready, {
    type: "ready",
    protocol_version: 1,
    capabilities: { capabilities: ["tools"], traits: [], operations: ["resume", "review"], contributed_tools: {} },
  });

  const echo = await session.prompt("c", "hi", { role: "operator", from_later: 1 });
  assert.deepEqual((echo.record as { answer: string }).answer, "echo hi");
  assert.deepEqual(deployment?.seen, ["operator:hi"]);

  const effect = await session.prompt("c", "effect");
  assert.deepEqual((effect.record as { attributes: unknown }).attributes, { first: true, second: true, again: false });
  assert.deepEqual(session.ledgerAsks.map((l) => [l.key, l.tool]), [["k:1", "t"], ["k:2", undefined], ["k:1", "t"]]);

  await session.prompt("c", "witness");
  assert.deepEqual(session.witnesses.map((w) => [w.tool, w.arguments, w.outcome]), [
    ["lookup", { city: "Lisbon" }, { status: "succeeded", result: { city: "Lisbon", forecast: "sunny" } }],
    ["lookup", { city: "nowhere" }, { status: "failed", error: "no such city" }],
  ]);

  const typed = await session.prompt("c", "typed");
  assert.deepEqual(typed.error, { kind: "NoSuchOrder", message: "no such order", code: "order.unknown" });

  const crash = await session.prompt("c", "crash", { state: { key: SECRET } });
  const { exception, ...named } = crash.error as { exception: { type: string; frames: { file: string; line: number; function: string }[] } };
  assert.deepEqual(named, { kind: "UnhandledException", message: "Error" });
  // The code half of the stack: the type and the frame that threw, in this
  // file, relative to the working directory; never the message.
  assert.equal(exception.type, "Error");
  const thrower = exception.frames[exception.frames.length - 1]!;
  assert.equal(thrower.function, "Probe.runTurn");
  assert.ok(thrower.file.endsWith("serve.test.js") && !thrower.file.startsWith("/"), thrower.file);
  assert.ok(thrower.line > 0);
  assert.ok(!session.raw.some((line) => line.includes("4242")), "no secret on the wire");
  assert.equal(errors.length, 1, "the adopter hears of the unhandled error");

  const resume = await session.request("resume", { conversation: "c", token: "t", answer: { approved: true }, question_id: "q" });
  assert.deepEqual((resume.record as { attributes: unknown }).attributes, { token: "t", answer: { approved: true }, qid: "q" });
  const bare = await session.request("resume", { conversation: "c", token: "t", answer: null });
  assert.deepEqual((bare.record as { attributes: unknown }).attributes, { token: "t", answer: null, qid: null });

  const rejected = await session.prompt("c", "feedback", { feedback: "rejected" });
  assert.deepEqual((rejected.record as { attributes: unknown }).attributes, { feedback: "rejected" });
  const unmarked = await session.prompt("c", "feedback");
  assert.deepEqual((unmarked.record as { attributes: unknown }).attributes, { feedback: null });

  const review = await session.request("review", { conversation: "c", action: "revoke", procedure: "refund-rule" });
  assert.deepEqual((review.record as { attributes: unknown }).attributes, { action: "revoke", procedure: "refund-rule" });
  const precondition = [{ path: "region", op: "eq", value: "US" }];
  await session.request("review", {
    conversation: "c",
    action: "approve",
    procedure: "refund-rule",
    draft: "verify the account region",
    tool: "issue_refund",
    precondition,
  });
  await session.request("review", { conversation: "c", action: "amend", procedure: "refund-rule", precondition, later: 1 });
  await session.request("review", { conversation: "c", action: "reject", draft: "call track_shipment" });
  assert.deepEqual(deployment?.reviews, [
    { kind: "review", action: "revoke", conversation: "c", procedure: "refund-rule" },
    {
      kind: "review",
      action: "approve",
      conversation: "c",
      procedure: "refund-rule",
      draft: "verify the account region",
      tool: "issue_refund",
      precondition,
    },
    { kind: "review", action: "amend", conversation: "c", procedure: "refund-rule", precondition },
    { kind: "review", action: "reject", conversation: "c", procedure: "", draft: "call track_shipment" },
  ]);

  assert.equal(await session.shutdown(), 0);
});

test("a reset reaches the deployment's reset, and the default refuses it", async () => {
  const resets: ResetRequest[] = [];
  class Resets extends Deployment {
    override async reset(request: ResetRequest): Promise<TurnRecord> {
      resets.push(request);
      return new TurnRecord({ answer: "reset" });
    }
  }
  const session = inProcess((dir) => new Resets(dir));
  await session.hello();
  const reset = await session.reset("c-1");
  assert.equal((reset.record as { answer: string }).answer, "reset");
  assert.deepEqual(resets, [{ kind: "reset", conversation: "c-1" }]);
  assert.equal(await session.shutdown(), 0);

  class Plain extends Deployment {}
  const plain = inProcess((dir) => new Plain(dir));
  await plain.hello();
  const refused = await plain.reset("c-1");
  assert.equal((refused.error as { kind: string }).kind, "ResetUnsupported");
  assert.equal(await plain.shutdown(), 0);
});

test("the trial's clock runs ahead by the handshake's offset", async () => {
  const session = inProcess((dir) => new Probe(dir));
  await session.hello({ clock_offset_ms: 3_600_000 });
  const before = Date.now();
  const clock = await session.prompt("c", "clock");
  const now = (clock.record as { attributes: { now: number } }).attributes.now;
  assert.ok(now >= before + 3_600_000 && now < before + 3_700_000);
  session.send({ type: "hello", protocol_versions: [1], durable_dir: "/x", trial: 0 });
  await assert.rejects(session.done, ProtocolError, "a second hello is out of place");
});

test("end of input is a shutdown, and closes the deployment", async () => {
  let closed = false;
  class Closing extends Probe {
    override async close(): Promise<void> {
      closed = true;
    }
  }
  const session = inProcess((dir) => new Closing(dir));
  await session.hello();
  await session.prompt("c", "hi");
  session.end();
  assert.equal(await session.done, 0);
  assert.ok(closed);
});

test("what the harness must not send ends the session with a ProtocolError that quotes nothing", async () => {
  const cases: Array<[string, unknown[]]> = [
    ["not JSON", [`{"type": "hello", "durable_dir": "${SECRET}"`]],
    ["not an object", [`["${SECRET}"]`]],
    ["no version 1", [{ type: "hello", protocol_versions: [2], durable_dir: SECRET, trial: 0 }]],
    ["a prompt first", [{ type: "prompt", id: 1, request: { conversation: "c", prompt: SECRET } }]],
    ["a bad id", ["hello", { type: "prompt", id: -1, request: { conversation: "c", prompt: SECRET } }]],
    ["no prompt", ["hello", { type: "prompt", id: 1, request: { conversation: SECRET } }]],
    ["state not an object", ["hello", { type: "prompt", id: 1, request: { conversation: "c", prompt: "p", state: SECRET } }]],
    ["unknown role", ["hello", { type: "prompt", id: 1, request: { conversation: "c", prompt: "p", role: SECRET } }]],
    ["unknown action", ["hello", { type: "review", id: 1, request: { conversation: "c", action: SECRET, procedure: "p" } }]],
    ["approve without tool", ["hello", { type: "review", id: 1, request: { conversation: "c", action: "approve", procedure: "p", draft: SECRET, precondition: [] } }]],
    ["an unknown type", ["hello", { type: SECRET }]],
    ["a resume without an answer", ["hello", { type: "resume", id: 1, request: { conversation: "c", token: SECRET } }]],
    ["a stray ledger result", ["hello", { type: "ledger_result", id: 1, key: SECRET, applied: true }]],
  ];
  for (const [name, lines] of cases) {
    const session = inProcess((dir) => new Probe(dir));
    for (const line of lines) {
      if (line === "hello") await session.hello();
      else session.send(typeof line === "string" ? `${line}\n` : (line as Record<string, unknown>));
    }
    await assert.rejects(session.done, (error: Error) => {
      assert.ok(error instanceof ProtocolError, `${name}: ${error.name}`);
      assert.ok(!error.message.includes("4242"), `${name}: ${error.message}`);
      return true;
    });
  }
});
