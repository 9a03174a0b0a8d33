/**
 * Serve a compiled LangGraph.js graph as a {@link Deployment}: prompt turns
 * run the graph on the conversation's thread, an `interrupt()` becomes a
 * pause with a single-use token, and a resume continues the graph with
 * `new Command({ resume: answer })` exactly once.
 *
 *     const deployment = (dir: string) =>
 *       new LangGraphDeployment(dir, {
 *         graph: (checkpointer) => builder.compile({ checkpointer }),
 *         input: (request) => ({ messages: [{ role: "user", content: request.prompt }] }),
 *       });
 *     process.exit(await serve(deployment));
 *
 * What it reads off the graph, never off the deployment's word:
 * - tool calls: each AI message's `tool_calls` since the turn began, ended
 *   by the tool message answering it (`status: "error"` is a failure), or
 *   pending when the turn paused before it was answered (an `interrupt()`
 *   inside a subgraph parks the calls of the subgraph's messages, which its
 *   parent sees only once the subgraph finishes);
 * - the pause: the interrupt the graph's state holds; its interaction is the
 *   pending tool call's name (approval on the call itself) or, for an
 *   interrupt in a plain node, {@link LangGraphOptions.interaction}.
 *   Several interrupts waiting at once (a `Send` fan-out, each tool call a
 *   task of its own) are one pause holding every unanswered call, its
 *   question `{"interrupts": [...]}`, resumed with one `Command` keyed by
 *   interrupt id ({@link resumeMap});
 * - the model input: every prompt the graph's chat models received in the
 *   turn, recorded by a callback handler, one message a line (the prompt's
 *   text when no chat model ran);
 * - the resume: the pending call settled by its tool message (`resolved`),
 *   the checkpoint it continued from, and every later call.
 *
 * The redemption refuses, before the graph is touched: an unknown, foreign
 * or replayed token, another question id, an answer the adopter's check
 * refuses (strict `{"approved": boolean}` by default), and a token whose
 * interrupt the thread no longer holds (`StalePauseToken`). The token is
 * spent only once the continuation finished, so a retry after a crash
 * carries it on; tool bodies reach the ledger with {@link effects}.
 */

import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { Command, GraphInterrupt, type BaseCheckpointSaver, type StateSnapshot } from "@langchain/langgraph";

import { effects } from "../effects.js";
import { MCP_FIXTURE } from "../mcp.js";
import type { Json, PromptRequest, ResumeRequest } from "../records.js";
import { Capabilities, Pause, ResolvedCall, ToolCall, TurnRecord } from "../records.js";
import { requireApproval, stale } from "../refusals.js";
import { Deployment, type Turn } from "../serve.js";
import { PauseTable, RunLease, type TokenCodec } from "../tokens.js";
import { DurableSaver } from "./checkpointer.js";
import { closeMcpSessions, fixtureBound } from "./langgraph-mcp.js";

// An interrupt is LangGraph's control flow through a tool body, not the
// tool's failure: witnessed bodies let it pass.
effects.passThrough(GraphInterrupt);

/** What the adapter hands the graph's runs: the thread, and its recorder of model input. */
export interface RunConfig {
  configurable: Record<string, unknown>;
  callbacks?: BaseCallbackHandler[];
}

/** The graph's surface this adapter uses (a compiled `StateGraph`). */
export interface Graph {
  invoke(input: unknown, config: RunConfig): Promise<unknown>;
  /** Used instead of `invoke` when {@link LangGraphOptions.stream} is set. */
  stream?(input: unknown, config: RunConfig & { streamMode?: "updates" }): Promise<AsyncIterable<unknown>>;
  getState(config: { configurable: Record<string, unknown> }, options?: { subgraphs?: boolean }): Promise<StateSnapshot>;
}

export interface LangGraphOptions {
  /** Compiles the graph with the checkpointer the adapter keeps durable. */
  graph: (checkpointer: BaseCheckpointSaver) => Graph;
  /** The graph's input for a prompt turn. */
  input: (request: PromptRequest) => unknown;
  /** The answer text from the graph's state (default: the last message's text). */
  answer?: (values: Record<string, unknown>) => string;
  /** The interaction's name for an interrupt outside a tool call. */
  interaction?: string;
  /** Checks a person's answer before the token is spent (default: strict approval). */
  validate?: (answer: Json) => void;
  /** Capabilities beyond `tools`, `human` and the `resume` operation. */
  capabilities?: (declared: Capabilities) => Capabilities;
  /** How pause tokens are published (see {@link TokenCodec}). */
  codec?: TokenCodec;
  /**
   * Run the graph with `stream()` (drained to its end) instead of
   * `invoke()`, as a deployment that streams to its users does: the
   * evidence is read off the thread's state either way.
   */
  stream?: boolean;
}

/** What a pause keeps to continue its graph. */
interface Handle {
  interruptId: string;
  /** Every interrupt the pause waits on, in the graph's task order. */
  interrupts: string[];
  checkpointId: string;
  /** The unanswered calls it holds, in the order the model asked for them. */
  pending: Array<{ call: string; toolCallId: string }>;
  messages: number;
  [key: string]: Json;
}

/**
 * The `Command({ resume })` map answering every interrupt in `interrupts`:
 * each gets `answer`, except that an answer of decisions, one per held call
 * (`{"decisions": [...]}`), to as many interrupts as calls deals each
 * interrupt the decision at its place (decisions in pending order), as the
 * Python adapter does. Accepting such an answer is the adopter's
 * `validate`'s choice; the default accepts approvals only.
 */
export function resumeMap(interrupts: string[], calls: number, answer: Json): Record<string, Json> {
  const decisions = (answer as { decisions?: unknown } | null)?.decisions;
  const byOrder = Array.isArray(decisions) && decisions.length === calls && interrupts.length === calls && calls > 1;
  return Object.fromEntries(interrupts.map((id, at) => [id, byOrder ? (decisions[at] as Json) : answer]));
}

interface Message {
  type?: string;
  content?: unknown;
  tool_calls?: Array<{ id?: string; name: string; args: unknown }>;
  tool_call_id?: string;
  status?: string;
  _getType?: () => string;
}

/** Records every prompt the run's chat models receive. */
class ModelInputs extends BaseCallbackHandler {
  name = "symfonic-model-inputs";
  readonly prompts: string[] = [];

  override handleChatModelStart(_llm: unknown, messages: unknown[][]): void {
    for (const prompt of messages) this.prompts.push((prompt as Message[]).map(render).join("\n"));
  }
}

/** One message as a line of model input: its role, its text, the calls it asks for. */
function render(message: Message): string {
  const calls = (message.tool_calls ?? []).map((call) => ` call ${call.name} ${JSON.stringify(call.args)}`).join("");
  return `${kind(message)}: ${text(message.content)}${calls}`;
}

function kind(message: Message): string {
  return message._getType?.() ?? message.type ?? "";
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part === "string" ? part : ((part as { text?: string }).text ?? ""))).join("");
  }
  return "";
}

/** A tool message's content as JSON where it is JSON. */
function result(content: unknown): Json {
  const body = text(content);
  try {
    return JSON.parse(body) as Json;
  } catch {
    return body;
  }
}

function jsonOf(value: unknown): Json {
  try {
    return JSON.parse(JSON.stringify(value ?? null)) as Json;
  } catch {
    return null;
  }
}

export class LangGraphDeployment extends Deployment {
  private readonly graph: Graph;
  private readonly pauses: PauseTable;
  private readonly run = new RunLease();

  constructor(
    durableDir: string,
    private readonly options: LangGraphOptions,
  ) {
    super(durableDir);
    this.graph = options.graph(new DurableSaver(durableDir));
    this.pauses = new PauseTable(durableDir, options.codec ? { codec: options.codec } : {});
  }

  override capabilities(): Capabilities {
    let declared = new Capabilities().capability("tools").capability("human").operation("resume");
    // A tool bound with mcpServed to the harness's fixture: the pack checks the calls it received.
    if (fixtureBound()) declared = declared.trait(MCP_FIXTURE);
    return this.options.capabilities?.(declared) ?? declared;
  }

  override async close(): Promise<void> {
    await closeMcpSessions();
  }

  private config(conversation: string): { configurable: Record<string, unknown> } {
    return { configurable: { thread_id: conversation } };
  }

  /** Runs the graph to its end or its interrupt, streamed when asked. */
  private async execute(input: unknown, config: RunConfig): Promise<void> {
    if (!this.options.stream) {
      await this.graph.invoke(input, config);
      return;
    }
    if (this.graph.stream === undefined) throw new TypeError("the graph has no stream()");
    for await (const _chunk of await this.graph.stream(input, { ...config, streamMode: "updates" })) {
      // Drained: what a user would have seen is not evidence; the state is.
    }
  }

  private messages(state: StateSnapshot): Message[] {
    const messages = (state.values as { messages?: unknown }).messages;
    return Array.isArray(messages) ? (messages as Message[]) : [];
  }

  /** Tool calls made from message `from` on, and the answers they got. */
  private calls(conversation: string, messages: Message[], from: number, paused: boolean) {
    const answers = new Map<string, Message>();
    for (const message of messages.slice(from)) {
      if (kind(message) === "tool" && message.tool_call_id) answers.set(message.tool_call_id, message);
    }
    const calls: Array<{ call: ToolCall; name: string; frameworkId: string; answered: boolean }> = [];
    messages.forEach((message, index) => {
      if (index < from || kind(message) !== "ai") return;
      for (const [n, toolCall] of (message.tool_calls ?? []).entries()) {
        const frameworkId = toolCall.id ?? `${n}`;
        // Scripted and replayed models reuse ids across turns and
        // conversations; the message's place in its thread does not repeat.
        const id = `${conversation}/${index}/${frameworkId}`;
        const args = jsonOf(toolCall.args);
        const answer = answers.get(frameworkId);
        const call =
          answer === undefined
            ? paused
              ? ToolCall.pending(id, toolCall.name, args)
              : ToolCall.failed(id, toolCall.name, args, "the tool call got no answer")
            : answer.status === "error"
              ? ToolCall.failed(id, toolCall.name, args, text(answer.content))
              : ToolCall.succeeded(id, toolCall.name, args, result(answer.content));
        calls.push({ call, name: toolCall.name, frameworkId, answered: answer !== undefined });
      }
    });
    return calls;
  }

  /**
   * The messages the interrupt waits among: those of the innermost
   * subgraph holding it (a compiled graph added as a node keeps its own
   * state until it finishes), or the graph's own.
   */
  private async held(conversation: string, interruptId: string | undefined, messages: Message[]): Promise<Message[]> {
    let inner = await this.graph.getState(this.config(conversation), { subgraphs: true });
    let held = messages;
    for (;;) {
      const task = inner.tasks.find(
        (t) => t.state !== undefined && "values" in t.state && t.interrupts.some((i) => i.id === interruptId),
      );
      if (task === undefined) return held;
      inner = task.state as StateSnapshot;
      const own = this.messages(inner);
      if (own.length > 0) held = own;
    }
  }

  private answerOf(state: StateSnapshot): string {
    const values = state.values as Record<string, unknown>;
    if (this.options.answer) return this.options.answer(values);
    const last = this.messages(state).at(-1);
    return last === undefined ? "" : text(last.content);
  }

  /** The record of a turn that ended: paused on an interrupt, or completed. */
  private async finish(conversation: string, from: number, modelInput: string, extra: Partial<TurnRecord> = {}): Promise<TurnRecord> {
    const config = this.config(conversation);
    const state = await this.graph.getState(config);
    const interrupts = state.tasks.flatMap((task) => task.interrupts);
    const interrupt = interrupts[0];
    const own = this.messages(state);
    const messages = interrupt === undefined ? own : await this.held(conversation, interrupt.id, own);
    const calls = this.calls(conversation, messages, from, interrupt !== undefined);
    const record = new TurnRecord({
      answer: this.answerOf(state),
      modelInput,
      toolCalls: [...(extra.toolCalls ?? []), ...calls.map((c) => c.call)],
      resolved: extra.resolved ?? [],
      attributes: extra.attributes ?? {},
    });
    if (interrupt === undefined) return record;
    const pending = calls.filter((c) => !c.answered);
    const interaction = pending[0]?.name ?? this.options.interaction ?? state.tasks[0]?.name ?? "interrupt";
    const handle: Handle = {
      interruptId: interrupt.id ?? "",
      interrupts: interrupts.map((i) => i.id ?? ""),
      checkpointId: String(state.config.configurable?.checkpoint_id ?? ""),
      pending: pending.map((c) => ({ call: c.call.id, toolCallId: c.frameworkId })),
      messages: messages.length,
    };
    const pause = this.pauses.issue({
      conversation,
      interaction,
      // One interrupt, one question: an attempt that died before answering
      // is handed the same pause again.
      questionId: `q-${interrupt.id ?? handle.checkpointId}`.slice(0, 256),
      handle,
    });
    const question = interrupts.length === 1 ? jsonOf(interrupt.value) : { interrupts: interrupts.map((i) => jsonOf(i.value)) };
    record.pause = new Pause(interaction, true, pause.token, question, pause.questionId);
    return record;
  }

  override async runTurn(request: PromptRequest, _turn: Turn): Promise<TurnRecord> {
    const config = this.config(request.conversation);
    const before = this.messages(await this.graph.getState(config)).length;
    const inputs = new ModelInputs();
    await this.execute(this.options.input(request), { ...config, callbacks: [inputs] });
    return this.finish(request.conversation, before, inputs.prompts.length > 0 ? inputs.prompts.join("\n\n") : request.prompt);
  }

  override async resume(request: ResumeRequest, _turn: Turn): Promise<TurnRecord> {
    const pause = this.pauses.verify(request, this.run);
    (this.options.validate ?? requireApproval)(request.answer);
    const handle = pause.handle as Handle | null;
    const config = this.config(request.conversation);
    const state = await this.graph.getState(config);
    const waiting = state.tasks.some((task) => task.interrupts.some((i) => (i.id ?? "") === handle?.interruptId));
    if (handle === null || !waiting) throw stale();
    return this.pauses.redeem(pause, this.run, async () => {
      const inputs = new ModelInputs();
      // Every interrupt the pause waits on, answered at once: a resume of
      // the first alone would leave the others waiting, a second pause.
      const several = handle.interrupts.length > 1;
      const resume = several ? resumeMap(handle.interrupts, handle.pending.length, request.answer) : request.answer;
      await this.execute(new Command({ resume }), { ...config, callbacks: [inputs] });
      const after = await this.graph.getState(config);
      const answers = this.messages(after).slice(handle.messages);
      const resolved = handle.pending.map(({ call, toolCallId }) => {
        const answered = answers.find((m) => kind(m) === "tool" && m.tool_call_id === toolCallId);
        if (answered === undefined) return ResolvedCall.succeeded(call, jsonOf(request.answer));
        if (answered.status === "error") return ResolvedCall.failed(call, text(answered.content));
        return ResolvedCall.succeeded(call, result(answered.content));
      });
      const record = await this.finish(request.conversation, handle.messages, inputs.prompts.join("\n\n"), {
        resolved,
        attributes: {
          resume_outcome: "resumed",
          resume_name: pause.interaction,
          resume_checkpoint: handle.checkpointId !== "",
          resume_continued: true,
        },
      });
      // The answered pending calls are settled in `resolved`, not called again.
      const settled = new Set(handle.pending.map((p) => p.call));
      record.toolCalls = record.toolCalls.filter((call) => !settled.has(call.id));
      return record;
    });
  }
}

export { DurableSaver, CHECKPOINT_FILE } from "./checkpointer.js";
export { callMcpTool, closeMcpSessions, fixtureBound, mcpServed } from "./langgraph-mcp.js";
