/**
 * The LangGraph.js adapter: the durable saver across instances, and the
 * example desk served in process through a pause, a restart, the resume, a
 * replay, a denial and a stale token.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { END, MemorySaver, MessagesAnnotation, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";

import { DurableSaver, LangGraphDeployment, type Graph } from "symfonic-evals-protocol/langgraph";

import { agent, build, desk, escalateTicket } from "../examples/langgraph/desk.js";
import { durable, inProcess, type Line } from "./harness.js";

function record(line: Line): Record<string, unknown> {
  assert.equal(line.type, "turn_record", JSON.stringify(line.error ?? null));
  return line.record as Record<string, unknown>;
}

const config = { configurable: { thread_id: "c" } };
const input = { messages: [{ role: "user", content: "escalate ticket 7" }] };

test("the durable saver keeps a paused graph for the next process; the in-memory one does not", async () => {
  const dir = durable();
  await build()(new DurableSaver(dir)).invoke(input, config);
  const again = await build()(new DurableSaver(dir)).getState(config);
  assert.deepEqual(again.next, ["tools"]);
  assert.equal(again.tasks[0]?.interrupts.length, 1);

  await build()(new MemorySaver()).invoke(input, config);
  const lost = await build()(new MemorySaver()).getState(config);
  assert.deepEqual(lost.next, []);
});

test("pause on the gated call, resume once after a restart, refuse the replay", async () => {
  const dir = durable();
  const first = inProcess(desk(), {}, dir);
  await first.hello();
  const paused = record(await first.prompt("c", "escalate ticket 7 to a supervisor"));
  const terminal = paused.terminal as { kind: string; interaction: string; token: string; question_id: string };
  assert.equal(terminal.kind, "paused");
  assert.equal(terminal.interaction, "escalate_ticket");
  assert.deepEqual(paused.tool_calls, [
    { id: "c/1/call_7", name: "escalate_ticket", arguments: { ticket: 7 }, outcome: { status: "pending" } },
  ]);
  assert.equal(first.ledger.size, 0, "nothing escalated before the answer");
  assert.equal(await first.shutdown(), 0);

  const second = inProcess(desk(), {}, dir);
  await second.hello();
  const resume = { conversation: "c", token: terminal.token, answer: { approved: true }, question_id: terminal.question_id };
  const unfit = await second.request("resume", { ...resume, answer: { approved: "yes" } });
  assert.equal((unfit.error as { code: string }).code, "answer.invalid");
  const resumed = record(await second.request("resume", resume));
  assert.deepEqual(resumed.resolved, [{ id: "c/1/call_7", outcome: { status: "succeeded", result: { escalated: 7 } } }]);
  assert.deepEqual(resumed.tool_calls, [], "the gated call is settled, not called again");
  assert.deepEqual(resumed.attributes, {
    resume_outcome: "resumed",
    resume_name: "escalate_ticket",
    resume_checkpoint: true,
    resume_continued: true,
  });
  assert.deepEqual([...second.ledger], ["escalate:7"]);
  assert.deepEqual(second.witnesses.map((w) => w.outcome), [{ status: "succeeded", result: '{"escalated":7}' }]);
  const replay = await second.request("resume", resume);
  assert.equal((replay.error as { code: string }).code, "pause.replayed");
  assert.equal(await second.shutdown(), 0);
});

test("a denial settles the call without its effect; a token whose interrupt is gone is stale", async () => {
  const session = inProcess(desk());
  await session.hello();
  const denied = record(await session.prompt("d", "escalate ticket 8"));
  const t = denied.terminal as { token: string; question_id: string };
  const answer = record(
    await session.request("resume", { conversation: "d", token: t.token, answer: { approved: false }, question_id: t.question_id }),
  );
  assert.deepEqual(answer.resolved, [{ id: "d/1/call_8", outcome: { status: "succeeded", result: { escalated: false } } }]);
  assert.equal(session.ledger.size, 0);

  const paused = record(await session.prompt("s", "escalate ticket 9"));
  const p = paused.terminal as { token: string; question_id: string };
  // The thread moves on: LangGraph answers the pending call with a new input.
  const moved = await session.prompt("s", "escalate ticket 10");
  assert.equal(moved.type, "turn_record");
  const late = await session.request("resume", { conversation: "s", token: p.token, answer: { approved: true }, question_id: p.question_id });
  assert.deepEqual(late.error, { kind: "StalePauseToken", message: "the conversation no longer waits on this pause", code: "pause.stale" });
  assert.equal(session.ledger.has("escalate:9"), false, "a stale approval escalates nothing");
  assert.equal(await session.shutdown(), 0);
});

/** The desk's agent and tools as a subgraph: the parent sees its messages only once it finishes. */
function nested(checkpointer: BaseCheckpointSaver) {
  const inner = new StateGraph(MessagesAnnotation)
    .addNode("agent", agent)
    .addNode("tools", new ToolNode([escalateTicket]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (s) => (s.messages.at(-1)?.getType() === "ai" && (s.messages.at(-1) as { tool_calls?: unknown[] }).tool_calls?.length ? "tools" : END))
    .addEdge("tools", "agent")
    .compile();
  return new StateGraph(MessagesAnnotation).addNode("desk", inner).addEdge(START, "desk").addEdge("desk", END).compile({ checkpointer });
}
// The desk's factory is typed by its own graph; the adapter needs only the Graph surface.
const nestedGraph = nested as unknown as ReturnType<typeof build>;

test("an interrupt inside a subgraph pauses with the subgraph's call pending, settled once on resume", async () => {
  const dir = durable();
  const first = inProcess(desk(nestedGraph), {}, dir);
  await first.hello();
  const paused = record(await first.prompt("n", "escalate ticket 5"));
  const terminal = paused.terminal as { kind: string; interaction: string; token: string; question_id: string };
  assert.equal(terminal.kind, "paused");
  assert.equal(terminal.interaction, "escalate_ticket", "the pause names the subgraph's gated call, not the parent's node");
  assert.deepEqual(paused.tool_calls, [
    { id: "n/1/call_5", name: "escalate_ticket", arguments: { ticket: 5 }, outcome: { status: "pending" } },
  ]);
  assert.equal(first.ledger.size, 0);
  assert.equal(await first.shutdown(), 0);

  const second = inProcess(desk(nestedGraph), {}, dir);
  await second.hello();
  const resume = { conversation: "n", token: terminal.token, answer: { approved: true }, question_id: terminal.question_id };
  const resumed = record(await second.request("resume", resume));
  assert.deepEqual(resumed.resolved, [{ id: "n/1/call_5", outcome: { status: "succeeded", result: { escalated: 5 } } }]);
  assert.deepEqual(resumed.tool_calls, [], "the parked call is settled, not reported again");
  assert.deepEqual([...second.ledger], ["escalate:5"]);
  const replay = await second.request("resume", resume);
  assert.equal((replay.error as { code: string }).code, "pause.replayed");
  assert.equal(await second.shutdown(), 0);
});

/** A prompt, its pause and the approval, with the token and the (random) question id taken out. */
async function approvalRun(streamed: boolean): Promise<{ records: unknown[]; ledger: string[]; ran: string[] }> {
  const ran: string[] = [];
  const graph = (checkpointer: BaseCheckpointSaver): Graph => {
    const compiled = build()(checkpointer);
    return {
      getState: (config, options) => compiled.getState(config, options),
      invoke: (input, config) => (ran.push("invoke"), compiled.invoke(input as never, config)),
      stream: (input, config) => (ran.push("stream"), compiled.stream(input as never, config)),
    };
  };
  const input = (request: { prompt: string }) => ({ messages: [{ role: "user", content: request.prompt }] });
  const session = inProcess((dir: string) => new LangGraphDeployment(dir, { graph, input, stream: streamed }));
  await session.hello();
  const paused = record(await session.prompt("t", "escalate ticket 3"));
  const t = paused.terminal as { token: string; question_id: string };
  const resume = { conversation: "t", token: t.token, answer: { approved: true }, question_id: t.question_id };
  const resumed = record(await session.request("resume", resume));
  const ledger = [...session.ledger];
  assert.equal(await session.shutdown(), 0);
  const { token: _token, question_id: _question, ...terminal } = paused.terminal as Record<string, unknown>;
  return { records: [{ ...paused, terminal }, resumed], ledger, ran };
}

test("a streamed graph gives the same evidence as an invoked one", async () => {
  const invoked = await approvalRun(false);
  const streamed = await approvalRun(true);
  assert.deepEqual(invoked.ran, ["invoke", "invoke"]);
  assert.deepEqual(streamed.ran, ["stream", "stream"], "the prompt and the resume both stream");
  assert.equal((streamed.records[0] as { terminal: { kind: string } }).terminal.kind, "paused");
  assert.deepEqual(streamed.records, invoked.records);
  assert.deepEqual(streamed.ledger, ["escalate:3"]);
  assert.deepEqual(streamed.ledger, invoked.ledger);
});

test("the extension tool: witnessed, its result in the model input the chat model received", async () => {
  const session = inProcess(desk());
  await session.hello();
  const answered = record(await session.prompt("w", "what is the weather in Lisbon"));
  assert.deepEqual(answered.tool_calls, [
    { id: "w/1/call_weather_1", name: "weather_lookup", arguments: { city: "Lisbon" }, outcome: { status: "succeeded", result: { city: "Lisbon", forecast: "sunny, 21 C" } } },
  ]);
  assert.equal(answered.answer, 'Done: {"city":"Lisbon","forecast":"sunny, 21 C"}');
  assert.equal(
    answered.model_input,
    'human: what is the weather in Lisbon\n\nhuman: what is the weather in Lisbon\nai:  call weather_lookup {"city":"Lisbon"}\ntool: {"city":"Lisbon","forecast":"sunny, 21 C"}',
  );
  assert.deepEqual(session.witnesses.map((w) => w.tool), ["weather_lookup"]);
  assert.equal(await session.shutdown(), 0);
});

test("the LangGraph desk stays small: at most 40 lines, at most 10 facing the harness", () => {
  // The rule: lines that are neither blank nor comments; a line faces the
  // harness when it names this package or one of its exports.
  const source = readFileSync(new URL("../../examples/langgraph/desk.ts", import.meta.url), "utf8");
  const code = source.split("\n").filter((line) => line.trim() !== "" && !/^\s*(\/\/|\/\*\*|\*)/.test(line));
  const facing = code.filter((line) => /symfonic-evals-protocol|\b(effects|witnessed|serve|mcpServed|LangGraphDeployment)\b/.test(line));
  assert.ok(code.length <= 40, `${code.length} lines`);
  assert.ok(facing.length <= 10, `${facing.length} lines facing the harness`);
  assert.ok(facing.length >= 5, "the rule still finds the harness's lines");
});
