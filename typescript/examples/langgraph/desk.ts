/**
 * A help desk on LangGraph.js, served through the adapter: a scripted agent
 * node (no model: the graph's shape is what is judged) calls
 * `escalate_ticket`, whose body asks a supervisor with `interrupt()` and
 * escalates through the harness's ledger once approved. The approval sits
 * on the gated call itself.
 */

import { pathToFileURL } from "node:url";

import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph, interrupt, type BaseCheckpointSaver } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

import { effects, serve, witnessed, type PromptRequest } from "symfonic-evals-protocol";
import { LangGraphDeployment } from "symfonic-evals-protocol/langgraph";

export const escalateTicket = tool(
  witnessed("escalate_ticket", async ({ ticket }: { ticket: number }) => {
    // Everything before interrupt() runs again on resume: nothing here may have an effect.
    const answer = interrupt({ question: `may I escalate ticket ${ticket} to a supervisor?` }) as { approved: boolean };
    if (!answer.approved) return JSON.stringify({ escalated: false });
    await effects.apply(`escalate:${ticket}`, "escalate_ticket");
    return JSON.stringify({ escalated: ticket });
  }),
  { name: "escalate_ticket", description: "Escalate a ticket once a supervisor approves.", schema: z.object({ ticket: z.number() }) },
);

/** The scripted agent: a tool call for an escalation, then the tool's answer. */
export function agent(state: typeof MessagesAnnotation.State): { messages: BaseMessage[] } {
  const last = state.messages.at(-1);
  if (last?.getType() === "tool") return { messages: [new AIMessage(`Done: ${String(last.content)}`)] };
  const ticket = /escalate ticket (\d+)/i.exec(String(last?.content ?? ""))?.[1];
  if (ticket === undefined) return { messages: [new AIMessage("Hello! How can I help?")] };
  const call = { id: `call_${ticket}`, name: "escalate_ticket", args: { ticket: Number(ticket) } };
  return { messages: [new AIMessage({ content: "", tool_calls: [call] })] };
}

export function build(tools = [escalateTicket]) {
  return (checkpointer: BaseCheckpointSaver) =>
    new StateGraph(MessagesAnnotation)
      .addNode("agent", agent)
      .addNode("tools", new ToolNode(tools))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (s) => ((s.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END))
      .addEdge("tools", "agent")
      .compile({ checkpointer });
}

// The part facing the harness: the graph, its input, and the claim that
// every effect goes through the ledger under a key naming the request.
const input = (request: PromptRequest) => ({ messages: [{ role: "user", content: request.prompt }] });
export const desk = (graph = build()) => (dir: string) =>
  new LangGraphDeployment(dir, { graph, input, capabilities: (c) => c.trait("idempotent-effects") });

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exit(await serve(desk()));
