/**
 * The server: a {@link Deployment} whose turns are async methods, served over
 * the protocol until shutdown or end of input.
 *
 * The harness keeps one request outstanding at a time, so turns run one
 * after another; inside a turn a handler may await anything, and concurrent
 * tool bodies of one turn may all use the {@link Turn}: its round trips are
 * taken one at a time.
 */

import type { Readable } from "node:stream";

import { ProtocolError, TurnFailure } from "./errors.js";
import type {
  Capabilities,
  Json,
  PromptRequest,
  ResetRequest,
  ResumeRequest,
  ReviewRequest,
  TurnRecord,
} from "./records.js";
import { Capabilities as CapabilitiesClass } from "./records.js";
import * as wire from "./wire.js";
import { bindTurn } from "./effects.js";

/** The harness's side of one request, available while the turn runs. */
export class Turn {
  private open = true;
  // Concurrent tool bodies share one channel: a ledger round trip must not
  // interleave with another one's.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly requestId: number,
    private readonly channel: wire.Channel,
  ) {}

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(() => {
      // A handler bug, not the harness's: the turn answers UnhandledException.
      if (!this.open) throw new Error("this turn has already been answered");
      return work();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Records an effect under `key` in the harness's side-effect ledger.
   *
   * `tool` names the tool whose call the effect belongs to: a pack then
   * judges the gated action by its own effects and allows the others (a
   * notice, an audit row). Without it, the whole ledger is judged.
   *
   * Resolves `true` when the key is new and the caller must now perform the
   * effect, `false` when it was applied before. The key names the request,
   * never the attempt: a retry after a crash must ask under the same key.
   */
  ledgerApply(key: string, tool?: string): Promise<boolean> {
    const message = wire.ledgerApply(this.requestId, key, tool);
    return this.exclusive(async () => {
      await this.channel.write(message);
      return wire.ledgerApplied(this.requestId, key, await this.channel.read());
    });
  }

  /**
   * Records, from inside a tool body, the arguments it received and how it
   * ended: `{result}` what it returned, or `{error}` what failed. Call it
   * where the body runs, not where the call is reported: the pack compares
   * the two, so a bridge that drops arguments or turns an upstream error
   * into a success shows.
   */
  witness(tool: string, args: Json, outcome: wire.WitnessOutcome): Promise<void> {
    const message = wire.witness(this.requestId, tool, args, outcome);
    return this.exclusive(() => this.channel.write(message));
  }

  /** The turn was answered: any later round trip is refused. */
  close(): void {
    this.open = false;
  }
}

/**
 * Extend and override: the deployment the harness evaluates. One instance
 * lives for one process; the harness restarts the process to test what
 * survives, so durable facts belong under {@link durableDir}.
 */
export abstract class Deployment {
  constructor(readonly durableDir: string) {}

  /** The evidence sent in the handshake. */
  capabilities(): Capabilities {
    return new CapabilitiesClass();
  }

  /** Called once before the handshake is answered: open clients here. */
  async start(): Promise<void> {}

  /** Runs one prompt turn; throw {@link TurnFailure} for a typed error. */
  async runTurn(_request: PromptRequest, _turn: Turn): Promise<TurnRecord> {
    throw new TurnFailure("NotImplemented", "this deployment runs no prompt turns");
  }

  /** Redeems a pause; throw {@link TurnFailure} for a typed error. */
  async resume(_request: ResumeRequest, _turn: Turn): Promise<TurnRecord> {
    throw new TurnFailure("ResumeUnsupported", "this deployment declares no resume operation");
  }

  /**
   * Carries out an operator's decision through the structured review door,
   * returning the door's evidence as attributes; throw {@link TurnFailure}
   * (`NoSuchDraft`, `NoSuchProcedure`) when it cannot. Declare the `review`
   * operation to have the harness call it.
   */
  async reviewProcedure(_request: ReviewRequest, _turn: Turn): Promise<TurnRecord> {
    throw new TurnFailure("ReviewUnsupported", "this deployment declares no review operation");
  }

  /**
   * Resets (or cancels) a conversation: forget whatever it had pending, its
   * pauses included, so a token issued before the reset is refused after
   * it; return a record (it may be empty). Declare the `reset` operation to
   * have the harness call it.
   */
  async reset(_request: ResetRequest, _turn: Turn): Promise<TurnRecord> {
    throw new TurnFailure("ResetUnsupported", "this deployment declares no reset operation");
  }

  /** Called once at orderly shutdown. */
  async close(): Promise<void> {}
}

/** Builds the deployment from the trial's durable directory. */
export type Factory = (durableDir: string) => Deployment | Promise<Deployment>;

/** Where {@link serve} reads and writes, and what it tells the adopter. */
export interface ServeOptions {
  /** Arguments to read `--durable-dir` from (default: the process's). */
  argv?: readonly string[];
  /** The harness's lines (default: stdin). */
  input?: Readable;
  /** Where answers go (default: the real stdout). */
  output?: wire.LineSink;
  /**
   * Called with every error a turn threw that was not a
   * {@link TurnFailure}, which the harness only sees as its type's name
   * (its message may quote turn content). Log it where turn content may go.
   */
  onError?: (error: unknown) => void;
  /**
   * The opt-in for deployments whose error texts hold no turn content: each
   * unhandled error's message (up to 2,000 characters) is sent with its
   * type and frames, and reports and failure messages show it in clear.
   * Off by default: only the type and the frames are sent.
   */
  exceptionMessages?: boolean;
}

/**
 * The real stdout for the protocol, and `process.stdout.write` and
 * `console.log` pointed at stderr meanwhile, so a stray print cannot corrupt
 * the stream. Returns the sink and a function that undoes the redirection.
 */
function claimStdout(): { sink: wire.LineSink; restore: () => void } {
  const stdout = process.stdout;
  const original = stdout.write;
  const sink: wire.LineSink = { write: original.bind(stdout) as wire.LineSink["write"] };
  stdout.write = process.stderr.write.bind(process.stderr) as typeof stdout.write;
  return {
    sink,
    restore: () => {
      stdout.write = original;
    },
  };
}

/**
 * Runs the protocol until shutdown or end of input; resolves to an exit code.
 *
 * A turn that throws {@link TurnFailure} answers with that typed error; any
 * other error answers `UnhandledException` naming the error's type and the
 * frames of its stack (file relative to the working directory, line,
 * function), never its message (see `exceptionMessages`), and the process
 * keeps serving. A {@link ProtocolError} ends it (the promise
 * rejects). Typical use: `process.exit(await serve((dir) => new Desk(dir)))`.
 */
export async function serve(factory: Factory, options: ServeOptions = {}): Promise<number> {
  const claimed = options.output === undefined ? claimStdout() : undefined;
  const input = options.input ?? process.stdin;
  const channel = new wire.Channel(input, options.output ?? claimed!.sink);
  try {
    const hello = await channel.read();
    if (hello === null) return 0;
    const deployment = await factory(wire.acceptHello(hello, options.argv));
    await deployment.start();
    await channel.write(wire.ready(deployment.capabilities().toJSON()));
    for (;;) {
      const message = await channel.read();
      if (wire.isShutdown(message)) {
        await deployment.close();
        return 0;
      }
      const { id, request } = wire.parseRequest(message!);
      const turn = new Turn(id, channel);
      let line: string;
      try {
        const record = await bindTurn(turn, request, () => {
          switch (request.kind) {
            case "prompt":
              return deployment.runTurn(request, turn);
            case "resume":
              return deployment.resume(request, turn);
            case "review":
              return deployment.reviewProcedure(request, turn);
            case "reset":
              return deployment.reset(request, turn);
          }
        });
        line = wire.Channel.encode(wire.answer(id, record));
      } catch (error) {
        if (error instanceof ProtocolError) throw error;
        if (!(error instanceof TurnFailure)) options.onError?.(error);
        line = wire.Channel.encode(wire.failure(id, error, options.exceptionMessages === true));
      }
      turn.close();
      await channel.send(line);
    }
  } finally {
    channel.close();
    if (options.input === undefined) process.stdin.destroy();
    claimed?.restore();
  }
}
