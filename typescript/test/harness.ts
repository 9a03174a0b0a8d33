/**
 * A scripted harness for the tests: speaks the protocol to a deployment
 * served in this process (over in-memory streams) or to a child process,
 * line by line, and checks every line the deployment writes against the
 * schema's `child_message`.
 */

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import assert from "node:assert/strict";

import { schemaViolation, serve, type Factory, type ServeOptions } from "symfonic-evals-protocol";

export type Line = Record<string, unknown>;

/** A fresh durable directory. */
export function durable(): string {
  return mkdtempSync(join(tmpdir(), "symfonic-ts-"));
}

/** Reads lines from a stream as parsed, schema-checked messages. */
class Lines {
  private buffer = "";
  private queue: Line[] = [];
  private waiting: ((line: Line | null) => void) | undefined;
  private ended = false;
  readonly raw: string[] = [];

  constructor(stream: NodeJS.ReadableStream) {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      this.buffer += chunk;
      let newline: number;
      while ((newline = this.buffer.indexOf("\n")) !== -1) {
        const text = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        this.raw.push(text);
        const line = JSON.parse(text) as Line;
        const why = schemaViolation("child_message", line);
        assert.equal(why, undefined, `a child line off the schema: ${why}`);
        if (this.waiting) {
          const waiting = this.waiting;
          this.waiting = undefined;
          waiting(line);
        } else this.queue.push(line);
      }
    });
    stream.on("end", () => {
      this.ended = true;
      this.waiting?.(null);
    });
  }

  next(): Promise<Line | null> {
    const line = this.queue.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no line within 10 s")), 10_000);
      this.waiting = (value) => {
        clearTimeout(timer);
        resolve(value);
      };
    });
  }
}

/** The harness's side of one session. */
export class Session {
  private nextId = 1;
  readonly ledger = new Set<string>();
  readonly witnesses: Line[] = [];
  readonly ledgerAsks: Line[] = [];

  constructor(
    private readonly write: (text: string) => void,
    private readonly lines: Lines,
    readonly dir: string,
    readonly done: Promise<unknown>,
    private readonly endInput: () => void,
  ) {}

  /** Closes the deployment's input, as a harness that goes away does. */
  end(): void {
    this.endInput();
  }

  /** Raw lines the deployment wrote. */
  get raw(): string[] {
    return this.lines.raw;
  }

  send(message: Line | string): void {
    this.write(typeof message === "string" ? message : `${JSON.stringify(message)}\n`);
  }

  next(): Promise<Line | null> {
    return this.lines.next();
  }

  /** Sends hello and returns the ready. */
  async hello(extra: Line = {}): Promise<Line> {
    this.send({ type: "hello", protocol_versions: [1], durable_dir: this.dir, trial: 0, ...extra });
    const ready = await this.next();
    assert.equal(ready?.type, "ready");
    return ready!;
  }

  /** Sends a reset of `conversation` (no request object: the conversation sits beside the id) and returns its answer. */
  async reset(conversation: string): Promise<Line> {
    const id = this.nextId++;
    this.send({ type: "reset", id, conversation });
    const line = await this.next();
    assert.ok(line, "the deployment closed its output mid-request");
    assert.equal(line.id, id, "the answer carries the request's id");
    return line;
  }

  /** Sends a request and answers its ledger asks (new keys applied) until its answer. */
  async request(type: "prompt" | "resume" | "review", request: Line): Promise<Line> {
    const id = this.nextId++;
    this.send({ type, id, request });
    for (;;) {
      const line = await this.next();
      assert.ok(line, "the deployment closed its output mid-request");
      if (line.type === "ledger_apply") {
        assert.equal(line.id, id);
        this.ledgerAsks.push(line);
        const key = line.key as string;
        const applied = !this.ledger.has(key);
        this.ledger.add(key);
        this.send({ type: "ledger_result", id, key, applied });
        continue;
      }
      if (line.type === "witness") {
        this.witnesses.push(line);
        continue;
      }
      assert.equal(line.id, id, "the answer carries the request's id");
      return line;
    }
  }

  prompt(conversation: string, prompt: string, extra: Line = {}): Promise<Line> {
    return this.request("prompt", { conversation, prompt, ...extra });
  }

  async shutdown(): Promise<unknown> {
    this.send({ type: "shutdown" });
    return this.done;
  }
}

/** Serves `factory` in this process over in-memory streams. */
export function inProcess(factory: Factory, options: Partial<ServeOptions> = {}, dir = durable()): Session {
  const input = new PassThrough();
  const output = new PassThrough();
  const done = serve(factory, { input, output, argv: [], ...options });
  done.finally(() => output.end()).catch(() => undefined);
  return new Session((text) => input.write(text), new Lines(output), dir, done, () => input.end());
}

/** Runs `script` under node as the harness would, with `--durable-dir`. */
export function child(script: string, dir = durable()): Session & { process: ChildProcessWithoutNullStreams } {
  const process = spawn(globalThis.process.execPath, [script, "--durable-dir", dir], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const stderr: string[] = [];
  process.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
  const done = new Promise<number | null>((resolve) => process.on("close", (code) => resolve(code)));
  const session = new Session(
    (text) => process.stdin.write(text),
    new Lines(process.stdout),
    dir,
    done,
    () => process.stdin.end(),
  );
  return Object.assign(session, { process, stderr });
}
