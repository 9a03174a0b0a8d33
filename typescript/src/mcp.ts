/**
 * Where the harness's MCP fixture is: the server that serves the extension
 * pack's tool for the trial, so the pack judges calls by what it received.
 * A deployment that binds it declares the `mcp-fixture` trait
 * ({@link MCP_FIXTURE}) and hands {@link mcpServerParams} to its MCP client.
 */

/** The variable the harness puts the fixture's Streamable HTTP URL in. */
export const MCP_URL_ENV = "MCP_SERVER_URL";

/** The variable the address of the fixture's stdio side is in. */
export const MCP_STDIO_ADDR_ENV = "MCP_STDIO_ADDR";

/** The variable the path of the stdio bridge is in, when the harness found it. */
export const MCP_COMMAND_ENV = "MCP_SERVER_COMMAND";

/** The trait a deployment that binds the fixture declares. */
export const MCP_FIXTURE = "mcp-fixture";

/** The shapes common JavaScript MCP clients take. */
export type McpShape = "mcp" | "langchain" | "openai-agents" | "stdio";

/** The fixture's Streamable HTTP URL, or `undefined` outside an extension pack run. */
export function mcpUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[MCP_URL_ENV] || undefined;
}

/**
 * The fixture's connection parameters in the shape a common MCP client
 * takes, or `undefined` when the trial serves none:
 *
 * - `"mcp"`: the official SDK's `new StreamableHTTPClientTransport(new URL(url))` (`{url}`);
 * - `"langchain"`: one server entry of `@langchain/mcp-adapters`'
 *   `MultiServerMCPClient` (`{url, transport: "http"}`);
 * - `"openai-agents"`: the options of the OpenAI Agents SDK's
 *   `MCPServerStreamableHttp` (`{url}`);
 * - `"stdio"`: a stdio server's `command` and `args`: the harness's bridge to
 *   the same fixture, `undefined` when the bridge was not found.
 */
export function mcpServerParams(
  shape: McpShape = "mcp",
  env: NodeJS.ProcessEnv = process.env,
): Record<string, unknown> | undefined {
  if (shape === "stdio") {
    const command = env[MCP_COMMAND_ENV];
    const address = env[MCP_STDIO_ADDR_ENV];
    return command && address ? { command, args: [address] } : undefined;
  }
  const url = mcpUrl(env);
  if (url === undefined) return undefined;
  switch (shape) {
    case "mcp":
    case "openai-agents":
      return { url };
    case "langchain":
      return { url, transport: "http" };
    default:
      throw new TypeError("unknown MCP client shape: mcp, langchain, openai-agents or stdio");
  }
}
