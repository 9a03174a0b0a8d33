/**
 * The OpenAI Agents SDK adapter against the real SDK with a scripted model:
 * the example desk served in process through a pause, a restart, the
 * resume, a replay, a denial and a stale token; a handoff whose target's
 * model calls are journaled and replayed on a retry; a guardrail's tripwire
 * reported as a refusal.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { Agent, Usage, handoff, tool, type InputGuardrail, type Model, type ModelRequest } from "@openai/agents";
import { z } from "zod";

import { OpenAIAgentsDeployment } from "symfonic-evals-protocol/openai-agents";

import { build, desk, escalateTicket, model } from "../examples/openai-agents/desk.js";
import { durable, inProcess, type Line } from "./harness.js";

function record(line: Line): Record<string, unknown> {
  assert.equal(line.type, "turn_record", JSON.stringify(line.error ?? null));
  return line.record as Record<string, unknown>;
}

type Terminal = { kind: string; interaction: string; token: string; question_id: string };

test("pause on the gated call, resume once after a restart, refuse the replay", async () => {
  const dir = durable();
  const first = inProcess(desk(), {}, dir);
  await first.hello();
  const paused = record(await first.prompt("c", "escalate ticket 7 to a supervisor"));
  const terminal = paused.terminal as Terminal;
  assert.equal(terminal.kind, "paused");
  assert.equal(terminal.interaction, "escalate_ticket");
  assert.deepEqual(paused.tool_calls, [
    { id: "c/prompt-1/call_7", name: "escalate_ticket", arguments: { ticket: 7 }, outcome: { status: "pending" } },
  ]);
  assert.match(paused.model_input as string, /^system: Help; escalate when asked.\nuser: escalate ticket 7 to a supervisor$/);
  assert.equal(first.ledger.size, 0, "nothing escalated before the answer");
  assert.equal(await first.shutdown(), 0);

  // A new deployment on the same directory: the state comes from the store.
  const second = inProcess(desk(), {}, dir);
  await second.hello();
  const resume = { conversation: "c", token: terminal.token, answer: { approved: true }, question_id: terminal.question_id };
  const unfit = await second.request("resume", { ...resume, answer: { approved: "yes" } });
  assert.equal((unfit.error as { code: string }).code, "answer.invalid");
  const resumed = record(await second.request("resume", resume));
  assert.deepEqual(resumed.resolved, [{ id: "c/prompt-1/call_7", outcome: { status: "succeeded", result: { escalated: 7 } } }]);
  assert.deepEqual(resumed.tool_calls, [], "the gated call is settled, not called again");
  assert.equal(resumed.answer, 'Done: {"escalated":7}');
  assert.deepEqual(resumed.attributes, {
    resume_outcome: "resumed",
    resume_name: "escalate_ticket",
    resume_checkpoint: true,
    resume_continued: true,
  });
  assert.deepEqual([...second.ledger], ["escalate:7"]);
  const replay = await second.request("resume", resume);
  assert.equal((replay.error as { code: string }).code, "pause.replayed");
  assert.equal(await second.shutdown(), 0);
});

test("a rejection is reported refused and runs nothing; a token of a conversation that moved on is stale", async () => {
  const session = inProcess(desk());
  await session.hello();
  const t = record(await session.prompt("d", "escalate ticket 8")).terminal as Terminal;
  const denied = record(
    await session.request("resume", { conversation: "d", token: t.token, answer: { approved: false }, question_id: t.question_id }),
  );
  assert.deepEqual(denied.resolved, [{ id: "d/prompt-1/call_8", outcome: { status: "refused", stage: "human-approval" } }]);
  assert.equal(session.ledger.size, 0);

  const p = record(await session.prompt("s", "escalate ticket 9")).terminal as Terminal;
  assert.equal((await session.prompt("s", "hello")).type, "turn_record");
  const late = await session.request("resume", { conversation: "s", token: p.token, answer: { approved: true }, question_id: p.question_id });
  assert.equal((late.error as { code: string }).code, "pause.stale");
  assert.equal(session.ledger.has("escalate:9"), false, "a stale approval escalates nothing");
  assert.equal(await session.shutdown(), 0);
});

test("a callable needsApproval pauses only the calls it names", async () => {
  const gated = escalateTicket;
  const original = gated.needsApproval;
  const agent = build([{ ...gated, needsApproval: async (_ctx: unknown, args: { ticket: number }) => args.ticket > 100 }]);
  const session = inProcess(desk(agent));
  await session.hello();
  const small = record(await session.prompt("a", "escalate ticket 5"));
  assert.deepEqual((small.terminal as Terminal).kind, "completed");
  assert.deepEqual([...session.ledger], ["escalate:5"]);
  const large = record(await session.prompt("b", "escalate ticket 500"));
  assert.equal((large.terminal as Terminal).kind, "paused");
  assert.equal(gated.needsApproval, original);
  assert.equal(await session.shutdown(), 0);
});

/** A model that hands off on its first call, and counts its calls. */
function counting(reply: (request: ModelRequest) => Record<string, unknown>): Model & { calls: number } {
  return {
    calls: 0,
    async getResponse(request: ModelRequest) {
      this.calls += 1;
      return { usage: new Usage(), output: [reply(request) as never] };
    },
    getStreamedResponse: () => {
      throw new Error("not streamed");
    },
  };
}

const say = (text: string) => ({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] });

test("a handoff target's model calls reach the model input and the journal; a retry replays them", async () => {
  let failures = 1;
  const flaky = tool({
    name: "look_up_invoice",
    description: "Look up an invoice.",
    parameters: z.object({}),
    errorFunction: null,
    execute: async () => {
      if (failures-- > 0) throw new Error("the invoice service went away");
      return "invoice 12: paid";
    },
  });
  const specialistModel = counting((request) =>
    (request.input as Array<{ callId?: string }>).at(-1)?.callId === "call_invoice"
      ? say("the specialist answers")
      : { type: "function_call", callId: "call_invoice", name: "look_up_invoice", arguments: "{}", status: "completed" },
  );
  const specialist = new Agent({ name: "specialist", instructions: "Answer billing questions.", model: specialistModel, tools: [flaky] });
  const triageModel = counting(() => ({
    type: "function_call",
    callId: "call_handoff",
    name: "transfer_to_specialist",
    arguments: "{}",
    status: "completed",
  }));
  const triage = new Agent({ name: "triage", instructions: "Route.", model: triageModel, handoffs: [handoff(specialist)] });
  const session = inProcess((d) => new OpenAIAgentsDeployment(d, { agent: triage }));
  await session.hello();
  const failed = await session.prompt("h", "a billing question");
  assert.equal(failed.type, "turn_error");
  assert.deepEqual([triageModel.calls, specialistModel.calls], [1, 1]);

  // The client's retry: the journaled responses, triage's and the
  // handoff target's, are replayed; only the call after the tool is new.
  const answered = record(await session.prompt("h", "a billing question"));
  assert.equal(answered.answer, "the specialist answers");
  assert.deepEqual([triageModel.calls, specialistModel.calls], [1, 2]);
  assert.match(answered.model_input as string, /system: Route\.[\s\S]*system: Answer billing questions\./);
  assert.deepEqual(
    (answered.tool_calls as Array<{ name: string; outcome: unknown }>).map((c) => [c.name, c.outcome]),
    [["look_up_invoice", { status: "succeeded", result: "invoice 12: paid" }]],
  );

  // Asked again once answered, the request runs afresh.
  record(await session.prompt("h", "a billing question"));
  assert.deepEqual([triageModel.calls, specialistModel.calls], [2, 4]);
  assert.equal(await session.shutdown(), 0);
});

test("a guardrail's tripwire ends the turn refused, with nothing run", async () => {
  const guard: InputGuardrail = {
    name: "no-escalations",
    execute: async ({ input }) => ({ tripwireTriggered: JSON.stringify(input).includes("escalate"), outputInfo: null }),
  };
  const agent = build();
  agent.inputGuardrails = [guard];
  const session = inProcess(desk(agent));
  await session.hello();
  const refused = record(await session.prompt("g", "escalate ticket 3"));
  assert.equal((refused.terminal as Terminal).kind, "completed");
  assert.deepEqual(refused.governance, [{ stage: "input-guardrail", outcome: "rejected", counts: { refused: 1 } }]);
  assert.deepEqual(refused.tool_calls, []);
  assert.equal(session.ledger.size, 0);
  assert.equal(await session.shutdown(), 0);
});

/** A prompt's pause, a restart and the approval, with the token and the (random) question id taken out. */
async function approvalRun(stream: boolean): Promise<{ records: unknown[]; ledger: string[]; calls: string[] }> {
  const calls: string[] = [];
  const counted: Model = {
    getResponse: (request) => (calls.push("response"), model.getResponse(request)),
    getStreamedResponse: (request) => (calls.push("streamed"), model.getStreamedResponse(request)),
  };
  const agent = new Agent({ name: "help desk", instructions: "Help; escalate when asked.", model: counted, tools: [escalateTicket] });
  const dir = durable();
  const first = inProcess((d) => new OpenAIAgentsDeployment(d, { agent, stream }), {}, dir);
  await first.hello();
  const paused = record(await first.prompt("s", "escalate ticket 4"));
  assert.equal(await first.shutdown(), 0);
  const t = paused.terminal as Terminal;
  const second = inProcess((d) => new OpenAIAgentsDeployment(d, { agent, stream }), {}, dir);
  await second.hello();
  const resumed = record(await second.request("resume", { conversation: "s", token: t.token, answer: { approved: true }, question_id: t.question_id }));
  const ledger = [...second.ledger];
  assert.equal(await second.shutdown(), 0);
  const { token: _token, question_id: _question, ...terminal } = t;
  return { records: [{ ...paused, terminal }, resumed], ledger, calls };
}

test("a streamed run gives the same evidence as a run that is not", async () => {
  const plain = await approvalRun(false);
  const streamed = await approvalRun(true);
  assert.deepEqual(plain.calls, ["response", "response"]);
  assert.deepEqual(streamed.calls, ["streamed", "streamed"], "the prompt and the resume both stream");
  assert.equal((streamed.records[0] as { terminal: Terminal }).terminal.kind, "paused");
  assert.deepEqual(streamed.records, plain.records);
  assert.deepEqual(streamed.ledger, ["escalate:4"]);
});

test("a streamed run's model responses are journaled: a retry after a failure replays them", async () => {
  let failures = 1;
  const flaky = tool({
    name: "look_up_invoice",
    description: "Look up an invoice.",
    parameters: z.object({}),
    errorFunction: null,
    execute: async () => {
      if (failures-- > 0) throw new Error("the invoice service went away");
      return "invoice 12: paid";
    },
  });
  const inner = counting((request) =>
    (request.input as Array<{ callId?: string }>).at(-1)?.callId === "call_invoice"
      ? say("paid")
      : { type: "function_call", callId: "call_invoice", name: "look_up_invoice", arguments: "{}", status: "completed" },
  );
  let streamedCalls = 0;
  const streaming: Model = {
    getResponse: () => Promise.reject(new Error("the run streams")),
    async *getStreamedResponse(request: ModelRequest) {
      streamedCalls += 1;
      const { output } = await inner.getResponse(request);
      yield { type: "response_done" as const, response: { id: `r${streamedCalls}`, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, output: output as never } };
    },
  };
  const agent = new Agent({ name: "billing", instructions: "Answer billing questions.", model: streaming, tools: [flaky] });
  const session = inProcess((d) => new OpenAIAgentsDeployment(d, { agent, stream: true }));
  await session.hello();
  assert.equal((await session.prompt("j", "a billing question")).type, "turn_error");
  assert.equal(streamedCalls, 1);
  const answered = record(await session.prompt("j", "a billing question"));
  assert.equal(answered.answer, "paid");
  assert.equal(streamedCalls, 2, "the first response is replayed from the journal; only the call after the tool is new");
  assert.equal(await session.shutdown(), 0);
});

test("the extension tool: witnessed, its result in the model input of the next model call", async () => {
  const session = inProcess(desk());
  const ready = await session.hello();
  const answered = record(await session.prompt("w", "what is the weather in Lisbon"));
  const result = { city: "Lisbon", forecast: "sunny, 21 C" };
  assert.deepEqual(answered.tool_calls, [
    { id: "w/prompt-1/call_Lisbon", name: "weather_lookup", arguments: { city: "Lisbon" }, outcome: { status: "succeeded", result } },
  ]);
  assert.equal(answered.answer, `Done: ${JSON.stringify(result)}`);
  assert.match(String(answered.model_input), /tool call_Lisbon -> \{"city":"Lisbon","forecast":"sunny, 21 C"\}/);
  assert.deepEqual(session.witnesses.map((w) => w.tool), ["weather_lookup"]);
  assert.ok(!JSON.stringify(ready.capabilities).includes("mcp-fixture"), "no fixture, no trait");
  assert.equal(await session.shutdown(), 0);
});

test("the Agents desk stays small: at most 40 lines, at most 10 facing the harness", () => {
  // The rule of the LangGraph desk's test: lines that are neither blank nor
  // comments; a line faces the harness when it names this package or one of
  // its exports.
  const source = readFileSync(new URL("../../examples/openai-agents/desk.ts", import.meta.url), "utf8");
  const code = source.split("\n").filter((line) => line.trim() !== "" && !/^\s*(\/\/|\/\*\*|\*)/.test(line));
  const facing = code.filter((line) => /symfonic-evals-protocol|\b(effects|witnessed|serve|mcpServerParams|OpenAIAgentsDeployment)\b/.test(line));
  console.log(`openai-agents desk: ${code.length} lines, ${facing.length} facing the harness`);
  assert.ok(code.length <= 40, `${code.length} lines`);
  assert.ok(facing.length <= 10, `${facing.length} lines facing the harness`);
  assert.ok(facing.length >= 5, "the rule still finds the harness's lines");
});
