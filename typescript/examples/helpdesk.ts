/**
 * A help desk written in TypeScript on symfonic-evals-protocol: a plain
 * deployment (no agent framework) the Rust harness judges with the approval
 * pack and the protocol conformance check.
 *
 * - "escalate ticket N ..." asks a supervisor first: the turn pauses on a
 *   pending `ask_user` call with a single-use token from the durable pause
 *   table; the resume validates the answer strictly, redeems the token once,
 *   and on approval escalates through the harness's ledger
 *   (`escalate_ticket`), so a retry after a crash escalates nothing twice.
 * - "refund order N" refunds through the ledger at once (`issue_refund`).
 * - "what is the weather in CITY" calls the contributed extension tool
 *   (`weather_lookup`): on the forecast service's MCP server where there is
 *   one (the harness's fixture, under the extension pack), else on the
 *   desk's own forecasts, whose body witnesses itself.
 * - anything else is small talk.
 *
 * Run it as the harness does: `node build/examples/helpdesk.js --durable-dir DIR`.
 * `examples/twins/` holds broken copies of it that the packs must catch.
 */

import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";

import {
  Capabilities,
  Deployment,
  Pause,
  PauseTable,
  ResolvedCall,
  RunLease,
  ToolCall,
  TurnRecord,
  effects,
  requireApproval,
  serve,
  witnessed,
  MCP_FIXTURE,
  mcpUrl,
  type Json,
  type JsonObject,
  type PromptRequest,
  type ResumeRequest,
  type Turn,
} from "symfonic-evals-protocol";

/** The escalation's body: it runs only after a supervisor approved. */
const escalateTicket = witnessed("escalate_ticket", async (args: { ticket: number }) => {
  // The key names the ticket, never the attempt: a retried resume asks the
  // ledger under the same key and escalates nothing twice.
  await effects.apply(`escalate:${args.ticket}`, "escalate_ticket");
  return { escalated: args.ticket };
});

/** The contributed extension tool: a forecast per city, the same every time. */
const FORECASTS: Record<string, string> = { Lisbon: "sunny, 21 C", Oslo: "snow, -3 C" };
const weatherLookup = witnessed("weather_lookup", async (args: { city: string }) => ({
  city: args.city,
  forecast: FORECASTS[args.city] ?? "cloudy, 15 C",
}));

/**
 * The forecast, asked of the forecast service's MCP server with the official
 * SDK's client: under the extension pack that server is the harness's
 * fixture, which witnesses its own executions.
 */
async function forecastRemote(url: string, args: { city: string }): Promise<JsonObject> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const client = new Client({ name: "helpdesk-ts", version: "0.1.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    await client.listTools();
    const result = await client.callTool({ name: "weather_lookup", arguments: args });
    const blocks = (result.content ?? []) as Array<{ type: string; text?: string }>;
    const text = blocks.map((block) => block.text ?? "").join("");
    if (result.isError) throw new Error(text || "the forecast service failed");
    return (result.structuredContent as JsonObject | undefined) ?? (JSON.parse(text) as JsonObject);
  } finally {
    await client.close();
  }
}

/** The forecast server's URL when there is one and the SDK to reach it is installed. */
async function forecastServer(): Promise<string | undefined> {
  const url = mcpUrl();
  if (url === undefined) return undefined;
  try {
    await import("@modelcontextprotocol/sdk/client/index.js");
    return url;
  } catch {
    return undefined;
  }
}

const issueRefund = witnessed("issue_refund", async (args: { order: number }) => {
  await effects.apply(`refund:${args.order}`, "issue_refund");
  return { refunded: args.order };
});

/** What a pause keeps to continue the turn it parked. */
interface Parked {
  ticket: number;
  askCall: string;
}

export class HelpDesk extends Deployment {
  protected readonly pauses = new PauseTable(this.durableDir);
  private readonly run = new RunLease();
  private server: string | undefined;

  override async start(): Promise<void> {
    this.server = await forecastServer();
  }

  override capabilities(): Capabilities {
    const declared = new Capabilities()
      .capability("tools")
      .capability("human")
      .operation("resume")
      .contributes("extensions", "weather_lookup")
      // Every effect goes through the ledger under a key naming the request.
      .trait("idempotent-effects");
    // The weather tool runs on the forecast server only where there is one.
    return this.server === undefined ? declared : declared.trait(MCP_FIXTURE);
  }

  override async runTurn(request: PromptRequest, _turn: Turn): Promise<TurnRecord> {
    const modelInput = `user: ${request.prompt}`;
    const escalate = /escalate ticket (\d+)/i.exec(request.prompt);
    if (escalate) {
      const ticket = Number(escalate[1]);
      const question = { question: `may I escalate ticket ${ticket} to a supervisor?` };
      const questionId = `q-${randomBytes(8).toString("hex")}`;
      const parked: Parked = { ticket, askCall: `ask-${questionId}` };
      const pause = this.pauses.issue({
        conversation: request.conversation,
        interaction: "ask_user",
        questionId,
        handle: { ...parked },
      });
      return new TurnRecord({
        answer: "A supervisor must approve this escalation first.",
        modelInput,
        toolCalls: [ToolCall.pending(parked.askCall, "ask_user", question)],
        pause: new Pause("ask_user", true, pause.token, question, pause.questionId),
      });
    }
    const refund = /refund order (\d+)/i.exec(request.prompt);
    if (refund) {
      const order = Number(refund[1]);
      const args = { order };
      const result = await issueRefund(args);
      return new TurnRecord({
        answer: `Order ${order} is refunded.`,
        modelInput,
        toolCalls: [ToolCall.succeeded(`refund-${request.conversation}-${order}`, "issue_refund", args, result)],
      });
    }
    const weather = /weather in (\p{Lu}[\p{L}-]*)/u.exec(request.prompt);
    if (weather) {
      const args = { city: weather[1] ?? "" };
      let result: JsonObject;
      try {
        result = this.server === undefined ? await weatherLookup(args) : await forecastRemote(this.server, args);
      } catch (error) {
        const message = error instanceof Error ? error.message : "the forecast failed";
        return new TurnRecord({
          answer: "The forecast is unavailable.",
          modelInput,
          toolCalls: [ToolCall.failed(`call-${randomBytes(8).toString("hex")}`, "weather_lookup", args, message)],
        });
      }
      // The result is what the model is shown next: the pack looks for it there.
      return new TurnRecord({
        answer: `The weather in ${String(result.city)}: ${String(result.forecast)}.`,
        modelInput: `${modelInput}\ntool weather_lookup: ${JSON.stringify(result)}`,
        // Random ids never repeat, across turns, conversations and restarts.
        toolCalls: [ToolCall.succeeded(`call-${randomBytes(8).toString("hex")}`, "weather_lookup", args, result)],
      });
    }
    return new TurnRecord({ answer: "Hello! How can I help?", modelInput });
  }

  /** The supervisor's decision: exactly `{"approved": boolean}`, nothing that resembles it. */
  protected decide(answer: Json): boolean {
    return requireApproval(answer);
  }

  override async resume(request: ResumeRequest, _turn: Turn): Promise<TurnRecord> {
    // Every refusal before anything runs: an unknown, foreign or replayed
    // token, another question, then an unfit answer (which spends nothing).
    const pause = this.pauses.verify(request, this.run);
    const approved = this.decide(request.answer);
    const parked = pause.handle as unknown as Parked | null;
    return this.pauses.redeem(pause, this.run, async () => {
      const toolCalls: ToolCall[] = [];
      if (approved && parked !== null) {
        const args = { ticket: parked.ticket };
        toolCalls.push(ToolCall.succeeded(`escalate-${pause.questionId}`, "escalate_ticket", args, await escalateTicket(args)));
      }
      return new TurnRecord({
        answer: approved ? `Ticket ${parked?.ticket} is escalated.` : "The escalation was declined.",
        toolCalls,
        resolved: parked === null ? [] : [ResolvedCall.succeeded(parked.askCall, request.answer)],
        attributes: {
          resume_outcome: "resumed",
          resume_name: pause.interaction,
          resume_checkpoint: parked !== null,
          resume_continued: true,
        },
      });
    });
  }
}

/** Serves `desk` when this module is the program node runs (not when imported). */
export async function main(desk: (dir: string) => HelpDesk, module: string): Promise<void> {
  if (process.argv[1] !== undefined && module === pathToFileURL(process.argv[1]).href) {
    process.exit(await serve(desk));
  }
}

await main((dir) => new HelpDesk(dir), import.meta.url);
