/**
 * The LangGraph.js adapter on several interrupts waiting at once: a `Send`
 * fan-out running each tool call of the model's message as a task of its
 * own, each task's tool asking with `interrupt()`. One pause holds every
 * call, one `Command` keyed by interrupt id resumes them all (across a
 * restart), and an answer of decisions reaches the interrupts in pending
 * order. Against real `@langchain/langgraph`, served in process.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, Send, StateGraph, interrupt, type BaseCheckpointSaver } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

import { effects, witnessed, type Json } from "symfonic-evals-protocol";
import { LangGraphDeployment, resumeMap } from "symfonic-evals-protocol/langgraph";

import { escalateTicket } from "../examples/langgraph/desk.js";
import { durable, inProcess, type Line, type Session } from "./harness.js";

function record(line: Line): Record<string, unknown> {
  assert.equal(line.type, "turn_record", JSON.stringify(line.error ?? null));
  return line.record as Record<string, unknown>;
}

type Terminal = { kind: string; interaction: string; token: string; question_id: string; question: Json };

/** The model: both tickets of the prompt in one message, then done. */
async function agent(state: typeof MessagesAnnotation.State) {
  if (state.messages.at(-1)?.getType() === "tool") return { messages: [new AIMessage("Done.")] };
  const calls = [7, 8].map((ticket) => ({ id: `call_${ticket}`, name: "escalate_ticket", args: { ticket } }));
  return { messages: [new AIMessage({ content: "", tool_calls: calls })] };
}

/** Each call of the model's message a task of its own, as a `Send` to the tool node. */
function fanOut(tools: ConstructorParameters<typeof ToolNode>[0]) {
  return (checkpointer: BaseCheckpointSaver) =>
    new StateGraph(MessagesAnnotation)
      .addNode("agent", agent)
      .addNode("tools", new ToolNode(tools))
      .addEdge(START, "agent")
      .addConditionalEdges(
        "agent",
        (s) => {
          const calls = (s.messages.at(-1) as AIMessage).tool_calls ?? [];
          return calls.length ? calls.map((call) => new Send("tools", { ...s, lg_tool_call: call })) : END;
        },
        ["tools", END],
      )
      .addEdge("tools", "agent")
      .compile({ checkpointer });
}

const input = (request: { prompt: string }) => ({ messages: [{ role: "user", content: request.prompt }] });

async function pauseOnBoth(session: Session): Promise<Terminal> {
  await session.hello();
  const paused = record(await session.prompt("c", "escalate tickets 7 and 8"));
  assert.deepEqual(paused.tool_calls, [
    { id: "c/1/call_7", name: "escalate_ticket", arguments: { ticket: 7 }, outcome: { status: "pending" } },
    { id: "c/1/call_8", name: "escalate_ticket", arguments: { ticket: 8 }, outcome: { status: "pending" } },
  ]);
  return paused.terminal as Terminal;
}

test("two interrupts at once: one pause holding both calls, one Command resuming both after a restart", async () => {
  const dir = durable();
  const desk = (d: string) => new LangGraphDeployment(d, { graph: fanOut([escalateTicket]), input });
  const first = inProcess(desk, {}, dir);
  const terminal = await pauseOnBoth(first);
  assert.equal(terminal.kind, "paused");
  assert.equal(terminal.interaction, "escalate_ticket");
  const questions = (terminal.question as { interrupts: Array<{ question: string }> }).interrupts.map((q) => q.question);
  assert.deepEqual(questions.sort(), ["may I escalate ticket 7 to a supervisor?", "may I escalate ticket 8 to a supervisor?"]);
  assert.equal(first.ledger.size, 0);
  assert.equal(await first.shutdown(), 0);

  const second = inProcess(desk, {}, dir);
  await second.hello();
  const resume = { conversation: "c", token: terminal.token, answer: { approved: true }, question_id: terminal.question_id };
  const resumed = record(await second.request("resume", resume));
  assert.deepEqual((resumed.terminal as Terminal).kind, "completed", "no interrupt left waiting");
  assert.deepEqual(resumed.resolved, [
    { id: "c/1/call_7", outcome: { status: "succeeded", result: { escalated: 7 } } },
    { id: "c/1/call_8", outcome: { status: "succeeded", result: { escalated: 8 } } },
  ]);
  assert.deepEqual(resumed.tool_calls, [], "the held calls are settled, not called again");
  assert.deepEqual([...second.ledger].sort(), ["escalate:7", "escalate:8"]);
  const replay = await second.request("resume", resume);
  assert.equal((replay.error as { code: string }).code, "pause.replayed");
  assert.equal(await second.shutdown(), 0);
});

test("an answer of decisions reaches the interrupts in pending order", async () => {
  const decided = tool(
    witnessed("escalate_ticket", async ({ ticket }: { ticket: number }) => {
      const decision = interrupt({ ticket }) as { type: string };
      if (decision.type !== "approve") return JSON.stringify({ escalated: false });
      await effects.apply(`escalate:${ticket}`, "escalate_ticket");
      return JSON.stringify({ escalated: ticket });
    }),
    { name: "escalate_ticket", description: "Escalate when the reviewer approves.", schema: z.object({ ticket: z.number() }) },
  );
  const validate = (answer: Json) => assert.ok(Array.isArray((answer as { decisions?: unknown }).decisions));
  const session = inProcess((d) => new LangGraphDeployment(d, { graph: fanOut([decided]), input, validate }));
  const terminal = await pauseOnBoth(session);
  const answer = { decisions: [{ type: "reject", message: "not 7" }, { type: "approve" }] };
  const resumed = record(await session.request("resume", { conversation: "c", token: terminal.token, answer, question_id: terminal.question_id }));
  assert.deepEqual(resumed.resolved, [
    { id: "c/1/call_7", outcome: { status: "succeeded", result: { escalated: false } } },
    { id: "c/1/call_8", outcome: { status: "succeeded", result: { escalated: 8 } } },
  ]);
  assert.deepEqual([...session.ledger], ["escalate:8"]);
  assert.equal(await session.shutdown(), 0);
});

test("the resume map: decisions dealt by place only when they match the calls and interrupts", () => {
  const answer = { decisions: [{ type: "approve" }, { type: "reject" }] };
  assert.deepEqual(resumeMap(["a", "b"], 2, answer), { a: { type: "approve" }, b: { type: "reject" } });
  assert.deepEqual(resumeMap(["a", "b"], 3, answer), { a: answer, b: answer });
  assert.deepEqual(resumeMap(["a", "b"], 2, { approved: true }), { a: { approved: true }, b: { approved: true } });
});
