/**
 * Serve an OpenAI Agents SDK agent (`@openai/agents`) as a
 * {@link Deployment}: prompt turns run the agent, a tool with
 * `needsApproval` (a boolean or a function of the call) pauses the turn
 * with a single-use token, and a resume approves or rejects the parked
 * calls on the saved `RunState` and runs it on exactly once.
 *
 *     const escalate = tool({ name: "escalate_ticket", needsApproval: true, parameters, execute });
 *     const agent = new Agent({ name: "desk", model, tools: [escalate] });
 *     process.exit(await serve((dir) => new OpenAIAgentsDeployment(dir, { agent })));
 *
 * What it reads off the run, never off the deployment's word:
 * - tool calls: each `RunToolCallItem` with its `RunToolCallOutputItem`
 *   (succeeded), a call a person rejected (refused by `human-approval`), a
 *   call to no such tool (failed), a call awaiting approval (pending);
 * - the pause: the run's interruptions; the `RunState` is serialised into
 *   the pause's row of the token table in the durable directory, never kept
 *   in memory, so a restarted process resumes what the last one paused;
 * - the model input: every model call of the turn, instructions and input
 *   items as the model got them, handoff targets' calls included;
 * - refusals: an input, output or tool guardrail's tripwire, and the
 *   model's own refusal, end the turn with a governance stage `rejected`;
 * - MCP servers: every agent's `mcpServers` are connected before the
 *   handshake is answered (after a restart too) and closed at shutdown; a
 *   call their tool answered with `isError` is failed, not succeeded (the
 *   SDK hands the error text to the model as the output), and the
 *   `mcp-fixture` trait is declared when one of them is the harness's
 *   fixture (see `mcpServerParams("openai-agents")`).
 *
 * The redemption refuses, before the state is touched: an unknown, foreign
 * or replayed token, another question id, an answer that is not exactly
 * `{"approved": boolean}`, and a token whose conversation has moved on
 * (`StalePauseToken`). The token is spent only once the continuation
 * finished; a crash leaves it to the client's retry, which replays the
 * journaled model responses (see `openai-agents-journal.ts`).
 */

import {
  Agent,
  AgentsError,
  InputGuardrailTripwireTriggered,
  ModelRefusalError,
  OutputGuardrailTripwireTriggered,
  RunState,
  RunToolApprovalItem,
  RunToolCallItem,
  RunToolCallOutputItem,
  Runner,
  ToolInputGuardrailTripwireTriggered,
  ToolOutputGuardrailTripwireTriggered,
  type MCPServer,
  type Model,
  type RunConfig,
  type RunResult,
  type StreamedRunResult,
  type ToolErrorFormatterArgs,
} from "@openai/agents-core";
import { createHash } from "node:crypto";

import { TurnFailure } from "../errors.js";
import { MCP_FIXTURE, mcpUrl } from "../mcp.js";
import type { Json, PromptRequest, ResumeRequest } from "../records.js";
import { Capabilities, Pause, ResolvedCall, Stage, ToolCall, TurnRecord } from "../records.js";
import { replayed, requireApproval, stale } from "../refusals.js";
import { Deployment, type Turn } from "../serve.js";
import { DurableJson } from "../store.js";
import { PauseTable, RunLease, type PauseEntry, type TokenCodec } from "../tokens.js";
import { RunJournal, RunScope, contentText, journaledGraph } from "./openai-agents-journal.js";

/** The stage a call is reported refused by when a person rejected it. */
export const APPROVAL_STAGE = "human-approval";

/** The adapter's own table of conversation serials, in the durable directory. */
export const SERIALS_FILE = "symfonic-openai-agents-serials.json";

export interface OpenAIAgentsOptions {
  /** The agent the turns start with (its handoff graph is served with it). */
  agent: Agent<any, any>;
  /** Handed to the `Runner` (tracing off by default); its `Model`, if any, is journaled. */
  runConfig?: Partial<RunConfig>;
  maxTurns?: number;
  /** What the agent runs on for a prompt (default: the prompt's text). */
  input?: (request: PromptRequest) => string;
  /** Reads a person's answer as approve (`true`) or reject (default: strict approval). */
  decide?: (answer: Json) => boolean;
  /** Capabilities beyond `tools`, `human` and the `resume` operation. */
  capabilities?: (declared: Capabilities) => Capabilities;
  /** How pause tokens are published (see {@link TokenCodec}). */
  codec?: TokenCodec;
  /**
   * Run with `stream: true` (drained to its end), as a deployment that
   * streams to its users does; the models' streamed responses are
   * journaled like the others, and the evidence is the run's items either way.
   */
  stream?: boolean;
}

/** What a pause keeps to run its state on. */
interface Handle {
  state: string;
  serial: number;
  seen: string[];
  [key: string]: Json;
}

/** A parked call, as the pause's row keeps it. */
interface Parked {
  id: string;
  callId: string;
  name: string;
  [key: string]: Json;
}

/** What the SDK told the adapter while one run went on. */
class Seen extends RunScope {
  readonly rejected = new Set<string>();
  readonly missing = new Set<string>();
  /** MCP calls answered with `isError`: the tool, its arguments (JSON) and the error's text. */
  readonly mcpErrors: Array<{ name: string; args: string; text: string }> = [];
}

/** The URL an MCP server over HTTP connects to (the SDK's class wraps the transport's, which holds it). */
function serverUrl(server: MCPServer): unknown {
  const wrapped = server as { params?: { url?: unknown }; underlying?: { params?: { url?: unknown } } };
  return wrapped.underlying?.params?.url ?? wrapped.params?.url;
}

/** Every agent `start` reaches through its handoffs, each once. */
function reachable(start: Agent<any, any>): Agent<any, any>[] {
  const agents: Agent<any, any>[] = [];
  const visit = (agent: Agent<any, any>) => {
    if (agents.includes(agent)) return;
    agents.push(agent);
    for (const entry of agent.handoffs) visit(entry instanceof Agent ? entry : entry.agent);
  };
  visit(start);
  return agents;
}

function jsonOf(value: unknown): Json {
  try {
    return JSON.parse(JSON.stringify(value ?? null)) as Json;
  } catch {
    return null;
  }
}

/** A call's arguments or a tool's output: JSON where the text is JSON. */
function parsed(value: unknown): Json {
  const body = typeof value === "string" ? value : contentText(value);
  if (typeof value !== "string" && typeof value === "object" && value !== null && !("text" in value)) return jsonOf(value);
  try {
    return JSON.parse(body) as Json;
  } catch {
    return body;
  }
}

/** The guardrail or refusal a run ended on, as a governance stage. */
function refusal(error: unknown): Stage | undefined {
  if (error instanceof InputGuardrailTripwireTriggered) return new Stage("input-guardrail", "rejected", { refused: 1 });
  if (error instanceof OutputGuardrailTripwireTriggered) return new Stage("output-guardrail", "rejected", { refused: 1 });
  if (error instanceof ToolInputGuardrailTripwireTriggered || error instanceof ToolOutputGuardrailTripwireTriggered) {
    return new Stage("tool-guardrail", "rejected", { refused: 1 });
  }
  if (error instanceof ModelRefusalError) return new Stage("model-refusal", "rejected", { refused: 1 });
  return undefined;
}

/** A finished run, streamed or not. */
type Ran = RunResult<any, any> | StreamedRunResult<any, any>;

export class OpenAIAgentsDeployment extends Deployment {
  protected readonly pauses: PauseTable;
  protected readonly run = new RunLease();
  private readonly journal: RunJournal;
  private readonly serials: DurableJson<{ conversations: Record<string, number> }>;
  private readonly runner: Runner;
  private current: Seen | undefined;

  constructor(
    durableDir: string,
    protected readonly options: OpenAIAgentsOptions,
  ) {
    super(durableDir);
    this.pauses = new PauseTable(durableDir, options.codec ? { codec: options.codec } : {});
    this.journal = new RunJournal(durableDir);
    this.serials = new DurableJson(durableDir, SERIALS_FILE, () => ({ conversations: {} }));
    const adopter = options.runConfig?.toolErrorFormatter;
    this.runner = new Runner({
      tracingDisabled: true,
      ...options.runConfig,
      // A model object is journaled per agent instead (see journaledGraph).
      model: typeof options.runConfig?.model === "string" ? options.runConfig.model : undefined,
      toolErrorFormatter: (args: ToolErrorFormatterArgs) => {
        if (args.kind === "approval_rejected") this.current?.rejected.add(args.callId);
        else this.current?.missing.add(args.callId);
        return adopter?.(args);
      },
    });
  }

  override capabilities(): Capabilities {
    let declared = new Capabilities().capability("tools").capability("human").operation("resume");
    const fixture = mcpUrl();
    const bound = this.servers().some((server) => serverUrl(server) === fixture);
    if (fixture !== undefined && bound) declared = declared.trait(MCP_FIXTURE);
    return this.options.capabilities?.(declared) ?? declared;
  }

  /** The MCP servers of every agent the run can reach, each once. */
  protected servers(): MCPServer[] {
    return [...new Set(reachable(this.options.agent).flatMap((agent) => agent.mcpServers ?? []))];
  }

  /** Connects the agents' MCP servers, each watched for the calls it answers with an error. */
  override async start(): Promise<void> {
    for (const server of this.servers()) {
      this.watch(server);
      await server.connect();
    }
  }

  override async close(): Promise<void> {
    for (const server of this.servers()) await server.close();
  }

  /** Has `server` note each call its tool answered with `isError` in the running turn. */
  private watch(server: MCPServer): void {
    const call = server.callToolResult?.bind(server);
    if (call === undefined) return;
    server.callToolResult = async (name, args, ...rest) => {
      const result = await call(name, args, ...rest);
      if (result.isError) {
        const text = contentText(result.content);
        this.current?.mcpErrors.push({ name, args: JSON.stringify(args ?? {}), text: text || "the MCP tool answered with an error" });
      }
      return result;
    };
  }

  /**
   * What the pause's row keeps of an interrupted run's state: the state
   * serialised, so it lives as long as the token table. A subclass keeping
   * it elsewhere (a variable) loses it with the process.
   */
  protected saveState(state: RunState<any, Agent<any, any>>): string {
    return state.toString();
  }

  /** The `RunState` of `pause`, from what {@link saveState} kept. */
  protected async loadState(pause: PauseEntry, agent: Agent<any, any>): Promise<RunState<any, Agent<any, any>>> {
    return RunState.fromString(agent, (pause.handle as Handle).state);
  }

  /** Claims the token for this continuation; `false` when another redemption won. */
  protected claim(pause: PauseEntry): boolean {
    return this.pauses.claim(pause, this.run);
  }

  override async runTurn(request: PromptRequest, _turn: Turn): Promise<TurnRecord> {
    const serial = this.serials.update((doc) => (doc.conversations[request.conversation] = (doc.conversations[request.conversation] ?? 0) + 1));
    const digest = createHash("sha256").update(JSON.stringify([request.prompt, request.state ?? null])).digest("hex");
    const attempt = `prompt:${request.conversation}:${digest}`;
    const input = this.options.input?.(request) ?? request.prompt;
    const outcome = await this.execute(attempt, input, request.state, request.conversation, `prompt-${serial}`, serial, []);
    return outcome.record;
  }

  override async resume(request: ResumeRequest, _turn: Turn): Promise<TurnRecord> {
    const pause = this.pauses.verify(request, this.run);
    const approved = (this.options.decide ?? requireApproval)(request.answer);
    const handle = pause.handle as Handle;
    if ((this.serials.read().conversations[pause.conversation] ?? 0) > handle.serial) throw stale();
    const attempt = `resume:${pause.questionId}`;
    const scope = new Seen(this.journal, attempt);
    const agent = journaledGraph(this.options.agent, scope, this.runModel());
    const state = await this.loadState(pause, agent);
    const interruptions = state.getInterruptions();
    // A state with nothing to approve was run already.
    if (interruptions.length === 0 || !this.claim(pause)) throw replayed();
    try {
      for (const item of interruptions) {
        if (approved) state.approve(item);
        else state.reject(item);
      }
      const { record, result } = await this.execute(attempt, state, undefined, pause.conversation, `resume-${pause.questionId}`, handle.serial, handle.seen, scope, agent);
      record.resolved = (pause.calls as Parked[]).map((call) => this.settle(call, result, scope, approved));
      record.attributes = { ...record.attributes, resume_outcome: "resumed", resume_name: pause.interaction, resume_checkpoint: true, resume_continued: true };
      this.pauses.spend(pause);
      return record;
    } catch (error) {
      this.pauses.release(pause, this.run);
      throw error;
    }
  }

  private runModel(): Model | undefined {
    const model = this.options.runConfig?.model;
    return typeof model === "object" ? model : undefined;
  }

  /** Runs the agent (or a saved state) once, journaled, into a turn record. */
  private async execute(
    attempt: string,
    input: string | RunState<any, Agent<any, any>>,
    context: Json | undefined,
    conversation: string,
    callScope: string,
    serial: number,
    seen: string[],
    scope = new Seen(this.journal, attempt),
    agent = journaledGraph(this.options.agent, scope, this.runModel()),
  ): Promise<{ record: TurnRecord; result: Ran | undefined }> {
    this.journal.open(attempt);
    this.current = scope;
    let result: Ran;
    try {
      const options = { ...(this.options.maxTurns === undefined ? {} : { maxTurns: this.options.maxTurns }), ...(context === undefined ? {} : { context }) };
      if (this.options.stream) {
        const streamed = await this.runner.run(agent, input, { ...options, stream: true });
        for await (const _event of streamed) {
          // Drained: what a user would have seen is not evidence; the items are.
        }
        await streamed.completed;
        result = streamed;
      } else result = await this.runner.run(agent, input, options);
    } catch (error) {
      const stage = refusal(error);
      if (stage === undefined) {
        if (error instanceof AgentsError) throw new TurnFailure(error.constructor.name, "the agent run failed");
        throw error;
      }
      this.journal.finish(attempt);
      return { record: new TurnRecord({ modelInput: scope.modelInputs.join("\n\n"), governance: [stage] }), result: undefined };
    } finally {
      this.current = undefined;
    }
    const record = this.record(result, scope, conversation, callScope, serial, seen);
    this.journal.finish(attempt);
    return { record, result };
  }

  /** The turn's evidence; pauses again (minting a token) when interrupted. */
  private record(result: Ran, scope: Seen, conversation: string, callScope: string, serial: number, seen: string[]): TurnRecord {
    const skip = new Set(seen);
    const calls = new Map<string, { name: string; args: Json; output?: unknown; ran: boolean }>();
    for (const item of result.newItems) {
      const raw = item.rawItem as { callId?: string; name?: string; arguments?: string; type?: string };
      if (typeof raw.callId !== "string" || skip.has(raw.callId)) continue;
      if (item instanceof RunToolCallItem || item instanceof RunToolApprovalItem) {
        if (!calls.has(raw.callId)) calls.set(raw.callId, { name: String(raw.name ?? raw.type), args: parsed(raw.arguments ?? "{}"), ran: false });
      } else if (item instanceof RunToolCallOutputItem) {
        const call = calls.get(raw.callId);
        if (call !== undefined) Object.assign(call, { output: item.output, ran: true });
      }
    }
    const pending = new Set(result.interruptions.map((item) => (item.rawItem as { callId?: string }).callId));
    const record = new TurnRecord({ modelInput: scope.modelInputs.join("\n\n") });
    const parked: Parked[] = [];
    for (const [callId, call] of calls) {
      const id = `${conversation}/${callScope}/${callId}`;
      if (pending.has(callId)) {
        record.toolCalls.push(ToolCall.pending(id, call.name, call.args));
        parked.push({ id, callId, name: call.name, args: call.args });
      } else if (scope.rejected.has(callId)) record.toolCalls.push(ToolCall.refused(id, call.name, call.args, APPROVAL_STAGE));
      else if (scope.missing.has(callId)) record.toolCalls.push(ToolCall.failed(id, call.name, call.args, "no such tool"));
      else if (call.ran) {
        const at = scope.mcpErrors.findIndex((e) => e.name === call.name && e.args === JSON.stringify(call.args));
        const error = at < 0 ? undefined : scope.mcpErrors.splice(at, 1)[0];
        if (error !== undefined) record.toolCalls.push(ToolCall.failed(id, call.name, call.args, error.text));
        else record.toolCalls.push(ToolCall.succeeded(id, call.name, call.args, parsed(call.output)));
      }
    }
    if (parked.length === 0) {
      const output = result.finalOutput;
      record.answer = typeof output === "string" ? output : JSON.stringify(output ?? "");
      return record;
    }
    const question: Json =
      (parked.length === 1
        ? { tool: parked[0]!.name, arguments: parked[0]!.args }
        : { calls: parked.map((call) => ({ tool: call.name, arguments: call.args })) }) as Json;
    const handle: Handle = { state: this.saveState(result.state), serial, seen: [...skip, ...calls.keys()] };
    const pause = this.pauses.issue({ conversation, interaction: parked[0]!.name, calls: parked, handle });
    record.pause = new Pause(pause.interaction, true, pause.token, question, pause.questionId);
    return record;
  }

  /** How the resumed run settled one parked call. */
  private settle(call: Parked, result: Ran | undefined, seen: Seen, approved: boolean): ResolvedCall {
    if (!approved || seen.rejected.has(call.callId)) return ResolvedCall.refused(call.id, APPROVAL_STAGE);
    const output = result?.newItems.find(
      (item) => item instanceof RunToolCallOutputItem && (item.rawItem as { callId?: string }).callId === call.callId,
    );
    if (output instanceof RunToolCallOutputItem) return ResolvedCall.succeeded(call.id, parsed(output.output));
    return ResolvedCall.failed(call.id, "the approved call did not run");
  }
}

export { RunJournal, JournaledModel, journaledGraph, renderModelInput, JOURNAL_FILE } from "./openai-agents-journal.js";
