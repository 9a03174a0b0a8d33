/**
 * A LangChain tool served by an MCP server instead of its own body: what a
 * LangGraph.js deployment does with its service's MCP server, and how the
 * harness's MCP fixture reaches the graph's tool node under the extension
 * pack without a longer desk.
 *
 *     export const weatherLookup = mcpServed(tool(localBody, { name: "weather_lookup", schema }));
 *
 * Where the environment names no server, the local tool is returned as it
 * is. Otherwise the returned tool keeps the local one's name, description
 * and schema, and each call connects to the server with the official SDK's
 * client (one session per process, its tools listed once), calls the
 * server's tool of that name with the model's arguments, and returns its
 * result as the tool message's content; a result with
 * `isError` is thrown, so the tool node answers with an error message (a
 * failed call). A deployment that bound the fixture declares the
 * `mcp-fixture` trait ({@link fixtureBound}).
 */

import { tool, type StructuredToolInterface } from "@langchain/core/tools";

import { mcpUrl } from "../mcp.js";

/** The part of the MCP SDK's `Client` used here. */
interface McpClient {
  connect(transport: unknown): Promise<void>;
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(request: { name: string; arguments: Record<string, unknown> }): Promise<{ content?: unknown; isError?: boolean; structuredContent?: unknown }>;
  close(): Promise<void>;
}

/** The URLs tools were bound to in this process. */
const bound = new Set<string>();

/** Whether a tool of this process is bound to the harness's MCP fixture. */
export function fixtureBound(): boolean {
  const url = mcpUrl();
  return url !== undefined && bound.has(url);
}

/** The sessions open in this process, one per server, each with the tools it listed. */
const sessions = new Map<string, Promise<{ client: McpClient; tools: string[] }>>();

/** A session with the server at `url`: connected, its tools listed, as an MCP client binds a server. */
async function session(url: string): Promise<{ client: McpClient; tools: string[] }> {
  // The SDK is the deployment's dependency, not the package's, and its types
  // need the DOM's: loaded by a name the compiler does not resolve.
  const sdk = "@modelcontextprotocol/sdk/client/";
  const { Client } = (await import(`${sdk}index.js`)) as { Client: new (info: object) => McpClient };
  const { StreamableHTTPClientTransport } = (await import(`${sdk}streamableHttp.js`)) as { StreamableHTTPClientTransport: new (url: URL) => unknown };
  const client = new Client({ name: "symfonic-evals-protocol", version: "0.1.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const { tools } = await client.listTools();
  return { client, tools: tools.map((t) => t.name) };
}

/** Calls `name` on the MCP server at `url`: its result's text (its structured content as JSON when it has one), or the error it answered with, thrown. */
export async function callMcpTool(url: string, name: string, args: Record<string, unknown>): Promise<string> {
  let opened = sessions.get(url);
  if (opened === undefined) {
    opened = session(url);
    sessions.set(url, opened);
    // A session that failed to open is opened again by the next call.
    opened.catch(() => sessions.delete(url));
  }
  const { client, tools } = await opened;
  if (!tools.includes(name)) throw new Error(`the MCP server lists no tool ${name}`);
  const result = await client.callTool({ name, arguments: args });
  const blocks = (result.content ?? []) as Array<{ type: string; text?: string }>;
  const text = blocks.map((block) => block.text ?? "").join("");
  if (result.isError) throw new Error(text || `the MCP tool ${name} answered with an error`);
  return result.structuredContent === undefined ? text : JSON.stringify(result.structuredContent);
}

/** Closes the sessions this process opened (at shutdown). */
export async function closeMcpSessions(): Promise<void> {
  const open = [...sessions.values()];
  sessions.clear();
  await Promise.allSettled(open.map(async (s) => (await s).client.close()));
}

/**
 * `local`, or the same tool served by the MCP server at `url` (the
 * harness's fixture when it runs one): see the module's documentation.
 */
export function mcpServed<T extends StructuredToolInterface>(local: T, url = mcpUrl()): T | StructuredToolInterface {
  if (url === undefined) return local;
  bound.add(url);
  return tool(async (args: Record<string, unknown>) => callMcpTool(url, local.name, args), {
    name: local.name,
    description: local.description,
    schema: local.schema as never,
  });
}
