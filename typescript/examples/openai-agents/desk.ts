/**
 * A help desk on the OpenAI Agents SDK for JavaScript, served through the
 * adapter: `escalate_ticket` needs a supervisor's approval (`needsApproval`),
 * so the run is interrupted, the adapter pauses the turn and keeps the
 * `RunState` in the durable directory, and a resume approves or rejects the
 * call and runs the state on. `weather_lookup`, the contributed extension
 * tool, is served by the forecast service's MCP server where there is one
 * (the harness's fixture, under the extension pack), else by the desk's own
 * witnessed copy. The model is scripted (the SDK's `Model` interface, no
 * network): the agent's shape is what is judged.
 */

import { pathToFileURL } from "node:url";

import { Agent, MCPServerStreamableHttp, Usage, tool, type Model, type ModelRequest } from "@openai/agents-core";
import { z } from "zod";

import { effects, mcpServerParams, serve, witnessed } from "symfonic-evals-protocol";
import { OpenAIAgentsDeployment, type OpenAIAgentsOptions } from "symfonic-evals-protocol/openai-agents";

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

/** The contributed extension tool: a forecast per city, the same every time. */
const FORECASTS: Record<string, string> = { Lisbon: "sunny, 21 C", Oslo: "snow, -3 C" };
export const weatherLookup = tool({ name: "weather_lookup", description: "The forecast for a city.", parameters: z.object({ city: z.string() }),
  execute: witnessed("weather_lookup", async ({ city }: { city: string }) => ({ city, forecast: FORECASTS[city] ?? "cloudy, 15 C" })) });

/** The scripted model: a tool call for an escalation or a forecast, then the tool's answer. */
export const model: Model = {
  async getResponse({ input }: ModelRequest) {
    const last = (typeof input === "string" ? [{ role: "user", content: input }] : input).at(-1) as Record<string, unknown>;
    const [, ticket, city] = /escalate ticket (\d+)|weather in (\p{Lu}[\p{L}-]*)/u.exec(String(last.content)) ?? [];
    const [name, args] = ticket === undefined ? ["weather_lookup", { city }] : ["escalate_ticket", { ticket: Number(ticket) }];
    const text = last.type === "function_call_result" ? `Done: ${([last.output].flat()[0] as { text: string }).text}` : "Hello! How can I help?";
    const call = { type: "function_call" as const, callId: `call_${ticket ?? city}`, name, arguments: JSON.stringify(args), status: "completed" as const };
    const message = { type: "message" as const, role: "assistant" as const, status: "completed" as const, content: [{ type: "output_text" as const, text }] };
    return { usage: new Usage(), output: [(ticket ?? city) === undefined || last.type === "function_call_result" ? message : call] };
  },
  async *getStreamedResponse(request: ModelRequest) {
    const { output } = await model.getResponse(request);
    yield { type: "response_done" as const, response: { id: "scripted", usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, output: output as never } };
  },
};

// The forecast service's MCP server, where the environment names one (the
// adapter connects it), in the place of the desk's own copy.
const forecasts = mcpServerParams("openai-agents") as { url: string } | undefined;
const mcpServers = () => (forecasts ? [new MCPServerStreamableHttp({ ...forecasts, name: "forecasts", cacheToolsList: true })] : []);
export const build = (tools = [escalateTicket, ...(forecasts ? [] : [weatherLookup])]) =>
  new Agent({ name: "help desk", instructions: "Help; escalate when asked.", model, tools, mcpServers: mcpServers() });

// The part facing the harness: the agent, and the claim that every effect
// goes through the ledger under a key naming the request.
export const desk = (agent = build(), more: Partial<OpenAIAgentsOptions> = {}) => (dir: string) =>
  new OpenAIAgentsDeployment(dir, { ...more, agent, capabilities: (c) => c.trait("idempotent-effects").contributes("extensions", "weather_lookup") });

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exit(await serve(desk()));
