/**
 * A help desk on LangGraph.js, served through the adapter: the agent node's
 * chat model (scripted, `model.ts`: the graph's shape is what is judged)
 * calls `escalate_ticket`, whose body asks a supervisor with `interrupt()`
 * and escalates through the harness's ledger once approved (the approval
 * sits on the gated call itself), or the contributed extension tool
 * `weather_lookup`, whose body witnesses itself, served by the forecast
 * service's MCP server where the environment names one (the harness's
 * fixture, under the extension pack).
 */

import { pathToFileURL } from "node:url";

import type { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph, interrupt, type BaseCheckpointSaver } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

import { effects, serve, witnessed, type PromptRequest } from "symfonic-evals-protocol";
import { LangGraphDeployment, mcpServed, type LangGraphOptions } from "symfonic-evals-protocol/langgraph";

import { ScriptedChatModel } from "./model.js";

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

/** The contributed extension tool: a forecast per city, the same every time. */
const FORECASTS: Record<string, string> = { Lisbon: "sunny, 21 C", Oslo: "snow, -3 C" };
export const weatherLookup = mcpServed(tool(
  witnessed("weather_lookup", async ({ city }: { city: string }) => JSON.stringify({ city, forecast: FORECASTS[city] ?? "cloudy, 15 C" })),
  { name: "weather_lookup", description: "The forecast for a city.", schema: z.object({ city: z.string() }) },
));

/** The agent: the (scripted) chat model on the conversation. */
const model = new ScriptedChatModel();
export const agent = async (state: typeof MessagesAnnotation.State) => ({ messages: [await model.invoke(state.messages)] });

export function build(tools = [escalateTicket, weatherLookup]) {
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
export const desk = (graph = build(), more: Partial<LangGraphOptions> = {}) => (dir: string) =>
  new LangGraphDeployment(dir, { ...more, graph, input, capabilities: (c) => c.trait("idempotent-effects").contributes("extensions", "weather_lookup") });

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exit(await serve(desk()));
