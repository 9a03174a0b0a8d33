/**
 * A help desk on the OpenAI Agents SDK for JavaScript, served through the
 * adapter: `escalate_ticket` needs a supervisor's approval (`needsApproval`),
 * so the run is interrupted, the adapter pauses the turn and keeps the
 * `RunState` in the durable directory, and a resume approves or rejects the
 * call and runs the state on. The model is scripted (the SDK's `Model`
 * interface, no network): the agent's shape is what is judged.
 */

import { pathToFileURL } from "node:url";

import { Agent, Usage, tool, type Model, type ModelRequest } from "@openai/agents-core";
import { z } from "zod";

import { effects, serve, witnessed } from "symfonic-evals-protocol";
import { OpenAIAgentsDeployment } from "symfonic-evals-protocol/openai-agents";

export const escalateTicket = tool({
  name: "escalate_ticket",
  description: "Escalate a ticket to a supervisor; a person approves it first.",
  parameters: z.object({ ticket: z.number() }),
  needsApproval: true,
  execute: witnessed("escalate_ticket", async ({ ticket }: { ticket: number }) => {
    await effects.apply(`escalate:${ticket}`, "escalate_ticket");
    return { escalated: ticket };
  }),
});

/** The scripted model: a tool call for an escalation, then the tool's answer. */
export const model: Model = {
  async getResponse({ input }: ModelRequest) {
    const last = (typeof input === "string" ? [{ role: "user", content: input }] : input).at(-1) as Record<string, unknown>;
    const ticket = /escalate ticket (\d+)/i.exec(String(last.content))?.[1];
    const text = last.type === "function_call_result" ? `Done: ${(last.output as { text: string }).text}` : "Hello! How can I help?";
    const call = { type: "function_call" as const, callId: `call_${ticket}`, name: "escalate_ticket", arguments: JSON.stringify({ ticket: Number(ticket) }), status: "completed" as const };
    const message = { type: "message" as const, role: "assistant" as const, status: "completed" as const, content: [{ type: "output_text" as const, text }] };
    return { usage: new Usage(), output: [ticket === undefined || last.type === "function_call_result" ? message : call] };
  },
  async *getStreamedResponse(request: ModelRequest) {
    const { output } = await model.getResponse(request);
    yield { type: "response_done" as const, response: { id: "scripted", usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, output: output as never } };
  },
};

export const build = (tools = [escalateTicket]) => new Agent({ name: "help desk", instructions: "Help; escalate when asked.", model, tools });

// The part facing the harness: the agent, and the claim that every effect
// goes through the ledger under a key naming the request.
export const desk = (agent = build()) => (dir: string) =>
  new OpenAIAgentsDeployment(dir, { agent, capabilities: (c) => c.trait("idempotent-effects") });

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exit(await serve(desk()));
