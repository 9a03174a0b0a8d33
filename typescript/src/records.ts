/**
 * The evidence a deployment reports and the requests it is sent, in the
 * harness's wire shapes (`protocol/v1.schema.json`).
 *
 * Every constructor checks what the schema constrains, so a malformed record
 * fails in the deployment's own code with a {@link RecordError} naming the
 * field, rather than as a protocol violation on the harness's side.
 */

import { RecordError } from "./errors.js";

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A JSON object. */
export type JsonObject = { [key: string]: Json };

/**
 * Who speaks in a prompt turn. An operator turn is an action on the
 * deployment (a review, an approval), not chat: route it to the operator
 * door on this role, never on the prompt's words, so a user cannot review by
 * asking.
 */
export const Role = { USER: "user", OPERATOR: "operator" } as const;
export type Role = (typeof Role)[keyof typeof Role];

const QUESTION_ID_MAX = 256;
const STAGE_OUTCOMES = ["passed", "rejected", "abstained", "broken", "downgraded"] as const;
export type StageOutcome = (typeof STAGE_OUTCOMES)[number];

function text(field: string, value: unknown, nonEmpty = false): string {
  if (typeof value !== "string" || (nonEmpty && value.length === 0)) {
    throw new RecordError(field, nonEmpty ? "is a non-empty string" : "is a string");
  }
  return value;
}

/** What the deployment declares it can do: the handshake's evidence. */
export class Capabilities {
  readonly capabilities = new Set<string>();
  readonly traits = new Set<string>();
  readonly operations = new Set<string>();
  readonly contributedTools = new Map<string, Set<string>>();

  /** Declares a capability such as `tools`, `human` or `extensions`. */
  capability(name: string): this {
    this.capabilities.add(text("capability", name, true));
    return this;
  }

  /** Declares a trait such as `procedural-precondition` or `context-clock`. */
  trait(name: string): this {
    this.traits.add(text("trait", name, true));
    return this;
  }

  /** Declares an operation beyond a prompt, such as `resume` or `review`. */
  operation(name: string): this {
    this.operations.add(text("operation", name, true));
    return this;
  }

  /** Declares that `capability` contributes `tool` (and the capability). */
  contributes(capability: string, tool: string): this {
    this.capability(capability);
    const tools = this.contributedTools.get(capability) ?? new Set<string>();
    tools.add(text("contributed tool", tool, true));
    this.contributedTools.set(capability, tools);
    return this;
  }

  /** The wire form: sorted lists, like the Rust evidence model. */
  toJSON(): JsonObject {
    const sorted = (set: Set<string>): string[] => [...set].sort();
    const tools: JsonObject = {};
    for (const name of [...this.contributedTools.keys()].sort()) {
      tools[name] = sorted(this.contributedTools.get(name) ?? new Set());
    }
    return {
      capabilities: sorted(this.capabilities),
      traits: sorted(this.traits),
      operations: sorted(this.operations),
      contributed_tools: tools,
    };
  }
}

/**
 * A turn that stopped for a person, redeemable with `token`. `question` (any
 * JSON) and `questionId` publish what was asked; the harness keeps the id
 * with the token and hands it back on the resume, so the redemption can
 * check that the answer addresses this question. `editable` names the calls
 * the pause holds pending that the person answering may edit before they run
 * (a deployment that names them declares {@link EDITABLE_CALLS} and takes the
 * edit answer, see {@link editDecisions}).
 */
export class Pause {
  constructor(
    readonly interaction: string,
    readonly resumable: boolean,
    readonly token: string,
    readonly question?: Json,
    readonly questionId?: string,
    readonly editable: readonly string[] = [],
    /**
     * Who may answer: the answer's field naming who gives it, and every name
     * entitled to stand there. The approval pack derives an answer from
     * someone outside the list.
     */
    readonly approvers?: { readonly field: string; readonly names: readonly string[] },
  ) {
    text("pause.interaction", interaction);
    if (approvers !== undefined) {
      text("pause.approvers.field", approvers.field);
      if (approvers.names.length === 0) throw new RecordError("pause.approvers.names", "names someone");
    }
    text("pause.token", token);
    if (typeof resumable !== "boolean") throw new RecordError("pause.resumable", "is a boolean");
    if (
      questionId !== undefined &&
      (typeof questionId !== "string" || questionId.length === 0 || questionId.length > QUESTION_ID_MAX)
    ) {
      throw new RecordError("pause.question_id", `is 1 to ${QUESTION_ID_MAX} characters`);
    }
  }

  /** The wire form: a paused terminal event. */
  toJSON(): JsonObject {
    const terminal: JsonObject = {
      kind: "paused",
      interaction: this.interaction,
      resumable: this.resumable,
      token: this.token,
    };
    if (this.question !== undefined && this.question !== null) terminal.question = this.question;
    if (this.questionId !== undefined) terminal.question_id = this.questionId;
    if (this.editable.length > 0) terminal.editable = [...this.editable];
    if (this.approvers !== undefined) {
      terminal.approvers = { field: this.approvers.field, names: [...this.approvers.names] };
    }
    return terminal;
  }
}

/**
 * The trait a deployment declares when one conversation may hold more than
 * one pending pause at once, each with its own token and answered on its own:
 * the approval pack's `approval/one-of-two` then also pauses two requests in
 * one conversation.
 */
export const CONCURRENT_PAUSES = "concurrent-pauses";

/**
 * The trait a deployment declares when a person answering a pause may edit
 * the call it holds: its pauses name the editable calls (`Pause.editable`)
 * and its resume takes the edit answer ({@link editDecisions}).
 */
export const EDITABLE_CALLS = "editable-calls";

/** One decision of the edit answer, as LangChain's human-in-the-loop middleware spells it. */
export type EditDecision =
  | { type: "approve" }
  | { type: "edit"; edited_action: { name: string; args: Json } }
  | { type: "reject"; message?: string };

/**
 * The decisions an edit answer (`{"decisions": [...]}`) carries, one per held
 * call in the order the pause reported them; `undefined` when `answer` is not
 * one. A rejection is a denial: report the call refused, not failed.
 */
export function editDecisions(answer: Json): EditDecision[] | undefined {
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) return undefined;
  const keys = Object.keys(answer);
  const decisions = (answer as JsonObject).decisions;
  if (keys.length !== 1 || !Array.isArray(decisions)) return undefined;
  for (const decision of decisions) {
    if (typeof decision !== "object" || decision === null || Array.isArray(decision)) return undefined;
    const d = decision as JsonObject;
    if (d.type === "edit") {
      const action = d.edited_action;
      if (typeof action !== "object" || action === null || Array.isArray(action)) return undefined;
      if (typeof (action as JsonObject).name !== "string" || !("args" in action)) return undefined;
    } else if (d.type === "reject") {
      if (d.message !== undefined && typeof d.message !== "string") return undefined;
    } else if (d.type !== "approve") {
      return undefined;
    }
  }
  return decisions as unknown as EditDecision[];
}

/** How a tool call ended, in the wire's tagged shape. */
export type ToolOutcome =
  | { status: "succeeded"; result: Json }
  | { status: "failed"; error: string }
  | { status: "refused"; stage: string }
  | { status: "pending" };

/** One tool call and how it ended. Build it with the static constructors. */
export class ToolCall {
  private constructor(
    readonly id: string,
    readonly name: string,
    readonly args: Json,
    readonly outcome: ToolOutcome,
  ) {
    text("tool_call.id", id);
    text("tool_call.name", name);
  }

  /** A call that ran and returned `result`. */
  static succeeded(id: string, name: string, args: Json, result: Json): ToolCall {
    return new ToolCall(id, name, args, { status: "succeeded", result });
  }

  /** A call that ran and ended in `error`. */
  static failed(id: string, name: string, args: Json, error: string): ToolCall {
    return new ToolCall(id, name, args, { status: "failed", error: text("tool_call.error", error) });
  }

  /** A call that governance `stage` refused before it ran. */
  static refused(id: string, name: string, args: Json, stage: string): ToolCall {
    return new ToolCall(id, name, args, { status: "refused", stage: text("tool_call.stage", stage) });
  }

  /**
   * A call the turn's pause parked: it has no outcome until a resume settles
   * it (see {@link ResolvedCall}).
   */
  static pending(id: string, name: string, args: Json): ToolCall {
    return new ToolCall(id, name, args, { status: "pending" });
  }

  /** Whether the call waits for a resume. */
  get isPending(): boolean {
    return this.outcome.status === "pending";
  }

  toJSON(): JsonObject {
    return { id: this.id, name: this.name, arguments: this.args, outcome: this.outcome };
  }
}

/**
 * A call an earlier pause left pending, as the resume that settled it reports
 * it: `id` is the pending call's id. `args`, when the resume ran the held
 * call, are the arguments it ran with: a person's edit or amendment shows
 * there, where the pending call still carries what the model asked for.
 */
export class ResolvedCall {
  private constructor(
    readonly id: string,
    readonly outcome: Exclude<ToolOutcome, { status: "pending" }>,
    readonly args?: Json,
  ) {
    text("resolved.id", id);
  }

  /**
   * The parked call returned `result` (for an interaction: the answer); a
   * held action the resume ran says the `args` it ran with.
   */
  static succeeded(id: string, result: Json, args?: Json): ResolvedCall {
    return new ResolvedCall(id, { status: "succeeded", result }, args);
  }

  /** The parked call ended in `error` (having run with `args`, when it ran). */
  static failed(id: string, error: string, args?: Json): ResolvedCall {
    return new ResolvedCall(id, { status: "failed", error: text("resolved.error", error) }, args);
  }

  /** Governance `stage` refused the parked call when it was settled. */
  static refused(id: string, stage: string): ResolvedCall {
    return new ResolvedCall(id, { status: "refused", stage: text("resolved.stage", stage) });
  }

  toJSON(): JsonObject {
    const resolved: JsonObject = { id: this.id, outcome: this.outcome };
    if (this.args !== undefined) resolved.arguments = this.args;
    return resolved;
  }
}

/**
 * One governance stage's answer, with named counts such as `checked` and
 * `refused`.
 */
export class Stage {
  constructor(
    readonly stage: string,
    readonly outcome: StageOutcome,
    readonly counts: Record<string, number> = {},
  ) {
    text("stage.stage", stage);
    if (!(STAGE_OUTCOMES as readonly string[]).includes(outcome)) {
      throw new RecordError("stage.outcome", `is one of ${STAGE_OUTCOMES.join(", ")}`);
    }
    for (const [name, count] of Object.entries(counts)) {
      if (!Number.isSafeInteger(count) || count < 0) {
        throw new RecordError(`stage.counts.${name}`, "is a non-negative integer");
      }
    }
  }

  toJSON(): JsonObject {
    return { stage: this.stage, outcome: this.outcome, counts: { ...this.counts } };
  }
}

/** The parts of a {@link TurnRecord}, all optional. */
export interface TurnRecordInit {
  answer?: string;
  modelInput?: string;
  pause?: Pause;
  toolCalls?: ToolCall[];
  resolved?: ResolvedCall[];
  governance?: Stage[];
  attributes?: JsonObject;
}

/**
 * The evidence one turn left behind. `attributes` hold values the deployment
 * read back out of its own store; pause facts come from `pause`, never from
 * an attribute. `resolved` lists the calls an earlier pause parked that this
 * turn (a resume) settled.
 */
export class TurnRecord {
  answer: string;
  modelInput: string;
  pause: Pause | undefined;
  toolCalls: ToolCall[];
  resolved: ResolvedCall[];
  governance: Stage[];
  attributes: JsonObject;

  constructor(init: TurnRecordInit = {}) {
    this.answer = init.answer ?? "";
    this.modelInput = init.modelInput ?? "";
    this.pause = init.pause;
    this.toolCalls = [...(init.toolCalls ?? [])];
    this.resolved = [...(init.resolved ?? [])];
    this.governance = [...(init.governance ?? [])];
    this.attributes = { ...(init.attributes ?? {}) };
  }

  /** The wire form; refuses a pending call on a turn that did not pause. */
  toJSON(): JsonObject {
    text("answer", this.answer);
    text("model_input", this.modelInput);
    if (this.pause === undefined && this.toolCalls.some((call) => call.isPending)) {
      throw new RecordError("tool_calls", "only a paused turn may report a pending call");
    }
    const record: JsonObject = {
      answer: this.answer,
      terminal: this.pause === undefined ? { kind: "completed" } : this.pause.toJSON(),
      tool_calls: this.toolCalls.map((call) => call.toJSON()),
      model_input: this.modelInput,
      governance: this.governance.map((stage) => stage.toJSON()),
      attributes: { ...this.attributes },
    };
    if (this.resolved.length > 0) record.resolved = this.resolved.map((call) => call.toJSON());
    return record;
  }
}

/**
 * A reviewer's verdict a prompt turn may carry: `rejected` marks a
 * demonstration a reviewer marked wrong, to be answered and never learned
 * from (no draft promoted or reinforced by it).
 */
export const Feedback = { REJECTED: "rejected" } as const;
export type Feedback = (typeof Feedback)[keyof typeof Feedback];

/**
 * A prompt turn: conversation, prompt text, explicit state if any, who
 * speaks, and a reviewer's verdict on it when it carries one.
 */
export interface PromptRequest {
  readonly kind: "prompt";
  readonly conversation: string;
  readonly prompt: string;
  readonly state: JsonObject | undefined;
  readonly role: Role;
  readonly feedback: Feedback | undefined;
}

/**
 * A redemption of a conversation's latest pause with a person's answer.
 * `questionId` is the id the pause published, handed back by the harness.
 */
export interface ResumeRequest {
  readonly kind: "resume";
  readonly conversation: string;
  readonly token: string;
  readonly answer: Json;
  readonly questionId: string | undefined;
}

/**
 * An operator's decision through the structured review door: `approve` the
 * one draft whose text contains `draft` under the name `procedure`,
 * governing `tool` when every predicate of `precondition` holds; `amend`
 * the approved procedure's predicates; `revoke` it; or `reject` the one
 * draft whose text contains `draft` (it never governs, cannot be approved,
 * and does not come back when the lesson is taught again).
 */
export type ReviewRequest =
  | {
      readonly kind: "review";
      readonly action: "approve";
      readonly conversation: string;
      readonly procedure: string;
      readonly draft: string;
      readonly tool: string;
      readonly precondition: JsonObject[];
    }
  | {
      readonly kind: "review";
      readonly action: "amend";
      readonly conversation: string;
      readonly procedure: string;
      readonly precondition: JsonObject[];
    }
  | {
      readonly kind: "review";
      readonly action: "revoke";
      readonly conversation: string;
      readonly procedure: string;
    }
  | {
      readonly kind: "review";
      readonly action: "reject";
      readonly conversation: string;
      /** Empty: a draft has no name yet (the field is there so code that reads every action's `procedure` still compiles). */
      readonly procedure: "";
      readonly draft: string;
    };

/**
 * A reset (or cancel) of one conversation (the `reset` operation): the user
 * starts over, so whatever the conversation had pending, its pauses
 * included, must not outlive it; a token issued before the reset is
 * refused after it.
 */
export interface ResetRequest {
  readonly kind: "reset";
  readonly conversation: string;
}

/** Any request the harness sends for a turn. */
export type Request = PromptRequest | ResumeRequest | ReviewRequest | ResetRequest;
