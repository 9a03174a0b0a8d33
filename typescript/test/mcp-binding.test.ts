/**
 * Both framework desks bound to an MCP server, as the extension pack binds
 * them to the harness's fixture: a forecast server on the official SDK
 * stands in for it here. The call reaches the server with the model's
 * arguments, the server's own result (its nonce) reaches the model and the
 * record, an `isError` answer is a failed call, and the deployment declares
 * the `mcp-fixture` trait. The desks read the server's URL when imported,
 * so the server starts first.
 */

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

import { MCP_URL_ENV, type Factory } from "symfonic-evals-protocol";

import { inProcess, type Line } from "./harness.js";

/** Every call the server received: its arguments. */
const received: Array<Record<string, unknown>> = [];

const http = createServer(async (req, res) => {
  const server = new McpServer({ name: "forecasts", version: "1.0.0" });
  server.registerTool("weather_lookup", { description: "The forecast for a city.", inputSchema: { city: z.string() } }, async ({ city }) => {
    received.push({ city });
    if (city === "Atlantis") return { isError: true, content: [{ type: "text" as const, text: "no such city" }] };
    return { content: [{ type: "text" as const, text: JSON.stringify({ city, forecast: "sunny, 21 C", nonce: `n${received.length}` }) }] };
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport as never);
  await transport.handleRequest(req, res);
});

before(async () => {
  await new Promise<void>((listening) => http.listen(0, "127.0.0.1", listening));
  process.env[MCP_URL_ENV] = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});

after(() => http.close());

function record(line: Line): Record<string, unknown> {
  assert.equal(line.type, "turn_record", JSON.stringify(line.error ?? null));
  return line.record as Record<string, unknown>;
}

async function bound(name: string, desk: Factory) {
  received.length = 0;
  const session = inProcess(desk);
  const ready = await session.hello();
  assert.ok((ready.capabilities as { traits: string[] }).traits.includes("mcp-fixture"), `${name}: the trait`);
  const answered = record(await session.prompt("w", "what is the weather in Lisbon"));
  const call = (answered.tool_calls as Array<{ name: string; arguments: unknown; outcome: { status: string; result?: unknown } }>)[0]!;
  assert.deepEqual([call.name, call.arguments, call.outcome], ["weather_lookup", { city: "Lisbon" }, { status: "succeeded", result: { city: "Lisbon", forecast: "sunny, 21 C", nonce: "n1" } }]);
  assert.match(String(answered.model_input), /"nonce":"n1"/, `${name}: the server's result reaches the model`);
  assert.match(String(answered.answer), /sunny/);
  assert.deepEqual(session.witnesses, [], `${name}: the server ran the tool, not the desk's own copy`);
  const failed = record(await session.prompt("x", "what is the weather in Atlantis"));
  const outcome = (failed.tool_calls as Array<{ outcome: { status: string; error?: string } }>)[0]!.outcome;
  assert.equal(outcome.status, "failed", `${name}: an isError answer is a failed call`);
  assert.deepEqual(received, [{ city: "Lisbon" }, { city: "Atlantis" }]);
  assert.equal(await session.shutdown(), 0);
}

test("the LangGraph.js desk's weather_lookup is served by the MCP server", async () => {
  const { desk } = await import("../examples/langgraph/desk.js");
  await bound("langgraph", desk());
});

test("the Agents desk's weather_lookup is served by the MCP server", async () => {
  const { desk } = await import("../examples/openai-agents/desk.js");
  await bound("openai-agents", desk());
});
