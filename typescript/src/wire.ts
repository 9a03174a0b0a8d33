/**
 * The protocol's lines: reading and writing them, and the messages a server
 * exchanges. One UTF-8 JSON object per line; every message read is checked
 * (its known fields) and every message written is checked (in full) against
 * the protocol's schema.
 */

import type { Readable } from "node:stream";

import { setClockOffsetMs } from "./clock.js";
import { trace } from "./exception.js";
import { ProtocolError, RecordError, TurnFailure } from "./errors.js";
import type { Feedback, Json, JsonObject, Request, TurnRecord } from "./records.js";
import { Role } from "./records.js";
import { schemaViolation } from "./schema.js";

/** The protocol version this package speaks. */
export const PROTOCOL_VERSION = 1;

/** The environment variable holding the trial's durable directory. */
export const DURABLE_DIR_ENV = "AGENT_DURABLE_DIR";

/** One protocol message. */
export type Message = { [key: string]: unknown };

const NEWLINE = 0x0a;

/**
 * Line-delimited JSON over two streams. Lines are split on bytes, so a
 * multi-byte character split across chunks arrives whole.
 */
/** Where a channel writes: a stream, or the real stdout's write function. */
export interface LineSink {
  write(chunk: string, encoding: BufferEncoding, callback: (error?: Error | null) => void): boolean;
}

export class Channel {
  private pending: Buffer[] = [];
  private lines: Buffer[] = [];
  private waiting: ((line: Buffer | null) => void) | undefined;
  private ended = false;
  private failure: Error | undefined;

  // Stream listeners take any arguments.
  private readonly listeners: Array<[string, (...args: any[]) => void]>;

  constructor(
    private readonly input: Readable,
    private readonly output: LineSink,
  ) {
    this.listeners = [
      ["data", (chunk: Buffer | string) => this.receive(Buffer.from(chunk))],
      ["end", () => this.finish()],
      ["close", () => this.finish()],
      [
        "error",
        (error: Error) => {
          this.failure = error;
          this.finish();
        },
      ],
    ];
    for (const [event, listener] of this.listeners) input.on(event, listener);
  }

  /** Stops reading: the input no longer keeps the process alive. */
  close(): void {
    for (const [event, listener] of this.listeners) this.input.off(event, listener);
    this.input.pause();
  }

  private receive(chunk: Buffer): void {
    let start = 0;
    for (let i = chunk.indexOf(NEWLINE); i !== -1; i = chunk.indexOf(NEWLINE, start)) {
      this.pending.push(chunk.subarray(start, i));
      this.deliver(Buffer.concat(this.pending));
      this.pending = [];
      start = i + 1;
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
  }

  private deliver(line: Buffer): void {
    const waiting = this.waiting;
    if (waiting !== undefined) {
      this.waiting = undefined;
      waiting(line);
    } else {
      this.lines.push(line);
    }
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.pending.length > 0) {
      this.deliver(Buffer.concat(this.pending));
      this.pending = [];
    }
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(null);
  }

  private nextLine(): Promise<Buffer | null> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  /** The next message, or `null` at end of input. Blank lines are skipped. */
  async read(): Promise<Message | null> {
    for (;;) {
      const line = await this.nextLine();
      if (line === null) {
        if (this.failure !== undefined) throw new ProtocolError("the harness's input failed");
        return null;
      }
      const body = line.toString("utf8").trim();
      if (body.length === 0) continue;
      let message: unknown;
      try {
        message = JSON.parse(body);
      } catch {
        throw new ProtocolError("the harness sent a line that is not JSON");
      }
      if (typeof message !== "object" || message === null || Array.isArray(message)) {
        throw new ProtocolError("a protocol line must be a JSON object");
      }
      return message as Message;
    }
  }

  /**
   * One message as one line, checked against the schema's `child_message`;
   * throws {@link RecordError} before anything is written when it is not
   * one (or holds something that is not JSON).
   */
  static encode(message: Message): string {
    const line = JSON.stringify(message, onlyJson);
    // What is checked is exactly what goes on the wire.
    const why = schemaViolation("child_message", JSON.parse(line));
    if (why !== undefined) throw new RecordError("message", why);
    return `${line}\n`;
  }

  /** Writes an encoded line. */
  send(line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.output.write(line, "utf8", (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Encodes and writes one message. */
  write(message: Message): Promise<void> {
    return this.send(Channel.encode(message));
  }
}

/**
 * Refuses what JSON cannot carry instead of letting `JSON.stringify` turn it
 * into `null` or drop it silently (the harness would read another value).
 */
function onlyJson(this: unknown, _key: string, value: unknown): unknown {
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw new RecordError("message", "JSON has no NaN or infinity");
  }
  if (typeof value === "bigint" || typeof value === "function" || typeof value === "symbol") {
    throw new RecordError("message", `a ${typeof value} is not JSON`);
  }
  return value;
}

/** The trial's durable directory, from `--durable-dir` or the environment. */
export function durableDir(argv: readonly string[] = process.argv.slice(2)): string {
  let found: string | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "--durable-dir") found = argv[i + 1];
    else if (arg?.startsWith("--durable-dir=")) found = arg.slice("--durable-dir=".length);
  }
  found ||= process.env[DURABLE_DIR_ENV];
  if (!found) throw new ProtocolError("no durable directory was given");
  return found;
}

/** Keeps only the fields the protocol defines: receivers ignore the rest. */
function known(value: unknown, fields: readonly string[]): Message {
  const source = value as Message;
  const kept: Message = {};
  for (const field of fields) if (field in source) kept[field] = source[field];
  return kept;
}

const HARNESS_FIELDS: Record<string, readonly string[]> = {
  hello: ["type", "protocol_versions", "durable_dir", "trial", "clock_offset_ms"],
  prompt: ["type", "id", "request"],
  resume: ["type", "id", "request"],
  review: ["type", "id", "request"],
  reset: ["type", "id", "conversation"],
  ledger_result: ["type", "id", "key", "applied"],
  shutdown: ["type"],
};

const REQUEST_FIELDS: Record<string, readonly string[]> = {
  prompt: ["conversation", "prompt", "state", "role", "feedback"],
  resume: ["conversation", "token", "answer", "question_id"],
  approve: ["conversation", "action", "procedure", "draft", "tool", "precondition"],
  amend: ["conversation", "action", "procedure", "precondition"],
  revoke: ["conversation", "action", "procedure"],
  reject: ["conversation", "action", "draft"],
};

/**
 * A harness message reduced to the fields the protocol defines and checked
 * against the schema's `harness_message`; a {@link ProtocolError} naming
 * the place when it is not one.
 */
export function checkHarnessMessage(message: Message): Message {
  const type = typeof message.type === "string" ? message.type : "";
  const fields = HARNESS_FIELDS[type];
  if (fields === undefined) throw new ProtocolError("the harness sent a message of an unknown type");
  const kept = known(message, fields);
  const request = kept.request;
  if (typeof request === "object" && request !== null && !Array.isArray(request)) {
    const action = (request as Message).action;
    const key = type === "review" ? (typeof action === "string" ? action : "") : type;
    const requestFields = REQUEST_FIELDS[key];
    if (requestFields === undefined) {
      throw new ProtocolError("a review's action is approve, amend, revoke or reject");
    }
    kept.request = known(request, requestFields);
  }
  const why = schemaViolation("harness_message", kept);
  if (why !== undefined) throw new ProtocolError(`the harness's ${type} message: ${why}`);
  return kept;
}

/**
 * Checks the handshake, sets the trial's clock offset and returns the
 * durable directory it names.
 */
export function acceptHello(message: Message, argv?: readonly string[]): string {
  if (message.type !== "hello") throw new ProtocolError("the first message is not a hello");
  const hello = checkHarnessMessage(message);
  const versions = hello.protocol_versions as number[];
  if (!versions.includes(PROTOCOL_VERSION)) {
    throw new ProtocolError(`the harness does not offer protocol version ${PROTOCOL_VERSION}`);
  }
  setClockOffsetMs((hello.clock_offset_ms as number | undefined) ?? 0);
  const dir = hello.durable_dir as string;
  return dir.length > 0 ? dir : durableDir(argv);
}

/** The answer to the handshake. */
export function ready(capabilities: JsonObject): Message {
  return { type: "ready", protocol_version: PROTOCOL_VERSION, capabilities };
}

/** Whether the message ends the session; end of input counts as a shutdown. */
export function isShutdown(message: Message | null): boolean {
  return message === null || message.type === "shutdown";
}

/** A prompt, resume or review message as its request id and request. */
export function parseRequest(message: Message): { id: number; request: Request } {
  if (
    message.type !== "prompt" &&
    message.type !== "resume" &&
    message.type !== "review" &&
    message.type !== "reset"
  ) {
    throw new ProtocolError("expected a prompt, resume, review, reset or shutdown message");
  }
  const checked = checkHarnessMessage(message);
  const id = checked.id as number;
  if (checked.type === "reset") {
    return { id, request: { kind: "reset", conversation: checked.conversation as string } };
  }
  const body = checked.request as Message;
  if (checked.type === "prompt") {
    return {
      id,
      request: {
        kind: "prompt",
        conversation: body.conversation as string,
        prompt: body.prompt as string,
        state: body.state as JsonObject | undefined,
        role: (body.role as Role | undefined) ?? Role.USER,
        feedback: body.feedback as Feedback | undefined,
      },
    };
  }
  if (checked.type === "resume") {
    return {
      id,
      request: {
        kind: "resume",
        conversation: body.conversation as string,
        token: body.token as string,
        // An absent answer is JSON null, as the harness's serde reads it.
        answer: (body.answer as Json | undefined) ?? null,
        questionId: body.question_id as string | undefined,
      },
    };
  }
  // A rejection names a draft, not a procedure: its `procedure` is empty.
  const named = body.action === "reject" ? { procedure: "" } : {};
  return { id, request: { kind: "review", ...named, ...body } as unknown as Request };
}

/** Asks the harness to apply an effect under `key`, of `tool`'s call when named. */
export function ledgerApply(id: number, key: string, tool?: string): Message {
  if (typeof key !== "string") throw new RecordError("key", "a ledger key is a string");
  if (tool !== undefined && (typeof tool !== "string" || tool.length === 0)) {
    throw new RecordError("tool", "a tool name is a non-empty string");
  }
  return tool === undefined ? { type: "ledger_apply", id, key } : { type: "ledger_apply", id, key, tool };
}

/** Reads the harness's answer to {@link ledgerApply}. */
export function ledgerApplied(id: number, key: string, reply: Message | null): boolean {
  if (reply === null) throw new ProtocolError("the harness closed the channel during a ledger operation");
  if (reply.type !== "ledger_result" || reply.id !== id) {
    throw new ProtocolError("expected the ledger result for this turn");
  }
  const checked = checkHarnessMessage(reply);
  if (checked.key !== key) throw new ProtocolError("the ledger result names another key");
  return checked.applied === true;
}

/** How a tool body ended, as a witness reports it: exactly one of the two. */
export type WitnessOutcome = { result: Json } | { error: string };

/** A tool body's account of one execution. */
export function witness(id: number, tool: string, args: Json, outcome: WitnessOutcome): Message {
  if (typeof tool !== "string" || tool.length === 0) {
    throw new RecordError("tool", "a witness names the tool whose body ran");
  }
  const hasResult = "result" in outcome;
  const hasError = "error" in outcome;
  if (hasResult === hasError) throw new RecordError("outcome", "a witness gives exactly one of result or error");
  if (hasError) {
    const error = (outcome as { error: unknown }).error;
    if (typeof error !== "string") throw new RecordError("outcome.error", "a witnessed error is text");
    return { type: "witness", id, tool, arguments: args, outcome: { status: "failed", error } };
  }
  const result = (outcome as { result: Json }).result;
  return { type: "witness", id, tool, arguments: args, outcome: { status: "succeeded", result } };
}

/** The turn's record. */
export function answer(id: number, record: TurnRecord): Message {
  if (typeof record?.toJSON !== "function") {
    throw new RecordError("record", "a turn handler returns a TurnRecord");
  }
  return { type: "turn_record", id, record: record.toJSON() };
}

/** The trace of `error`, or none when reading it throws: it must never cost the answer. */
function safeTrace(error: unknown, messages: boolean): JsonObject | undefined {
  try {
    return trace(error, messages);
  } catch {
    return undefined;
  }
}

/**
 * The typed error a failed turn answers with. Anything but a
 * {@link TurnFailure} answers `UnhandledException` named by its type only:
 * its message may quote turn content, and the harness prints kinds in
 * clear. Its `exception` is the code half of the stack trace (type and
 * frames, see {@link trace}), with each message only when `messages` is
 * true (the adopter's opt-in). A {@link TurnFailure} thrown with a `cause`
 * carries the cause's trace the same way.
 */
export function failure(id: number, error: unknown, messages = false): Message {
  if (error instanceof TurnFailure) {
    const body: JsonObject = error.toJSON();
    const cause = safeTrace(error.cause, messages);
    if (cause !== undefined) body.exception = cause;
    return { type: "turn_error", id, error: body };
  }
  const exception = safeTrace(error, messages);
  const name = exception !== undefined ? (exception.type as string) : typeof error;
  const body: JsonObject = { kind: "UnhandledException", message: name };
  if (exception !== undefined) body.exception = exception;
  return { type: "turn_error", id, error: body };
}
