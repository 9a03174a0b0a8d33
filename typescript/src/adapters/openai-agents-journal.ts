/**
 * The model side of the OpenAI Agents SDK adapter: every model call a run
 * makes, its input rendered as text for the turn record, its response
 * journaled under the attempt in the trial's durable directory. A client's
 * retry after a crash replays the responses the dead attempt got instead of
 * asking the model again, so the retried run takes the same path and its
 * tools ask the ledger under the same keys.
 *
 * Handoffs: the run goes through a copy of the agent's handoff graph with
 * every agent's model wrapped (names kept, so a saved `RunState` finds its
 * current agent), so the target's model calls are journaled too.
 */

import { Agent, Handoff, Usage, type Model, type protocol, type ModelRequest, type ModelResponse } from "@openai/agents-core";

import type { Json } from "../records.js";
import { DurableJson } from "../store.js";

/** The journal's file name in the durable directory. */
export const JOURNAL_FILE = "symfonic-openai-agents-journal.json";

type Attempt = { responses: Json[]; finished: boolean };
type Document = { attempts: Record<string, Attempt> };

/** Model responses per attempt, kept until the attempt finished. */
export class RunJournal {
  private readonly document: DurableJson<Document>;

  constructor(durableDir: string) {
    this.document = new DurableJson<Document>(durableDir, JOURNAL_FILE, () => ({ attempts: {} }));
  }

  /**
   * Opens `attempt`: a finished one (the same request asked again, not
   * retried) starts over; an unfinished one (its process died) is a retry
   * and keeps its responses.
   */
  open(attempt: string): void {
    this.document.update((doc) => {
      const found = doc.attempts[attempt];
      if (found === undefined || found.finished) doc.attempts[attempt] = { responses: [], finished: false };
    });
  }

  /** The `index`th response `attempt` got, if it got one. */
  response(attempt: string, index: number): Json | undefined {
    return this.document.read().attempts[attempt]?.responses[index];
  }

  record(attempt: string, index: number, response: Json): void {
    this.document.update((doc) => {
      const found = doc.attempts[attempt] ?? { responses: [], finished: false };
      found.responses[index] = response;
      doc.attempts[attempt] = found;
    });
  }

  /** The attempt answered: its responses are not replayed again. */
  finish(attempt: string): void {
    this.document.update((doc) => {
      const found = doc.attempts[attempt];
      if (found !== undefined) doc.attempts[attempt] = { responses: [], finished: true };
    });
  }
}

/** One model call's input as text: the instructions, then each input item. */
export function renderModelInput(instructions: string | undefined, input: ModelRequest["input"]): string {
  const lines = instructions ? [`system: ${instructions}`] : [];
  const items = typeof input === "string" ? [{ role: "user", content: input }] : (input as unknown[]);
  for (const raw of items) {
    const item = raw as Record<string, unknown>;
    if (typeof item.role === "string" && (item.type === undefined || item.type === "message")) {
      lines.push(`${item.role}: ${contentText(item.content)}`);
    } else if (item.type === "function_call") {
      lines.push(`call ${String(item.name)} ${String(item.arguments)}`);
    } else if (item.type === "function_call_result") {
      lines.push(`tool ${String(item.callId)} -> ${contentText(item.output)}`);
    } else {
      lines.push(JSON.stringify(item));
    }
  }
  return lines.join("\n");
}

/** The text of a message's or a tool output's content. */
export function contentText(content: unknown): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(contentText).join("");
  if (typeof content === "object") {
    const part = content as Record<string, unknown>;
    for (const key of ["text", "refusal"]) if (typeof part[key] === "string") return part[key] as string;
  }
  return JSON.stringify(content);
}

/** What the journaled models of one run saw. */
export class RunScope {
  readonly modelInputs: string[] = [];
  private calls = 0;

  constructor(
    readonly journal: RunJournal,
    readonly attempt: string,
  ) {}

  /** The next call's place in the attempt (shared by every agent's model). */
  nextCall(): number {
    return this.calls++;
  }
}

/** A model whose calls are rendered and journaled in a {@link RunScope}. */
export class JournaledModel implements Model {
  constructor(
    private readonly inner: Model,
    private readonly scope: RunScope,
  ) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const { index, saved } = this.begin(request);
    if (saved !== undefined) return { output: saved.output, responseId: saved.responseId, usage: new Usage(saved.usage) };
    const response = await this.inner.getResponse(request);
    this.keep(index, response.output, response.responseId, response.usage);
    return response;
  }

  /**
   * A streamed model call: the inner model's events passed on, its
   * `response_done` journaled; a replayed call streams only that event
   * (what the run takes from a stream is the finished response).
   */
  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const { index, saved } = this.begin(request);
    if (saved !== undefined) {
      yield { type: "response_done", response: { id: saved.responseId ?? `replayed-${index}`, usage: usageFields(new Usage(saved.usage)), output: saved.output as protocol.StreamEventResponseCompleted["response"]["output"] } };
      return;
    }
    for await (const event of this.inner.getStreamedResponse(request)) {
      if (event.type === "response_done") {
        const done = event.response;
        this.keep(index, done.output as ModelResponse["output"], done.id, new Usage(done.usage));
      }
      yield event;
    }
  }

  /** Renders the call's input and finds the response a dead attempt got, if any. */
  private begin(request: ModelRequest): { index: number; saved: Saved | undefined } {
    this.scope.modelInputs.push(renderModelInput(request.systemInstructions, request.input));
    const index = this.scope.nextCall();
    return { index, saved: this.scope.journal.response(this.scope.attempt, index) as Saved | undefined };
  }

  private keep(index: number, output: ModelResponse["output"], responseId: string | undefined, usage: Usage): void {
    const kept = { output, usage: usageFields(usage), ...(responseId === undefined ? {} : { responseId }) };
    this.scope.journal.record(this.scope.attempt, index, JSON.parse(JSON.stringify(kept)) as Json);
  }
}

type Saved = { output: ModelResponse["output"]; responseId?: string; usage: ConstructorParameters<typeof Usage>[0] };
type StreamEvent = protocol.StreamEvent;

/** The token counts a journal keeps of a response's usage. */
function usageFields(usage: Usage): { requests: number; inputTokens: number; outputTokens: number; totalTokens: number } {
  return { requests: usage.requests, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens };
}

/**
 * A copy of `start`'s handoff graph whose agents' models are journaled in
 * `scope`: `fallback` (the run config's model, when a `Model`) for every
 * agent, else each agent's own; a model named by a string is left to the
 * run's model provider, unjournaled.
 */
export function journaledGraph(start: Agent<any, any>, scope: RunScope, fallback?: Model): Agent<any, any> {
  const copies = new Map<Agent<any, any>, Agent<any, any>>();
  const copy = (agent: Agent<any, any>): Agent<any, any> => {
    const known = copies.get(agent);
    if (known !== undefined) return known;
    // The run config's model overrides every agent's, as the SDK has it.
    const model = fallback ?? (typeof agent.model === "string" ? undefined : agent.model);
    const clone = agent.clone(model === undefined ? {} : { model: new JournaledModel(model, scope) });
    copies.set(agent, clone);
    clone.handoffs = agent.handoffs.map((entry) => {
      if (entry instanceof Agent) return copy(entry);
      const target = copy(entry.agent);
      const handoff = Object.assign(Object.create(Object.getPrototypeOf(entry) as object) as Handoff<any, any>, entry);
      handoff.agent = target;
      handoff.onInvokeHandoff = async (context, args) => {
        await entry.onInvokeHandoff(context, args);
        return target;
      };
      return handoff;
    });
    return clone;
  };
  return copy(start);
}
