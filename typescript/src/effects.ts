/**
 * The harness's ledger and witness from inside a tool body, wherever the
 * framework calls it from: the server binds each turn with
 * `AsyncLocalStorage`, which follows every promise, timer and callback the
 * turn starts, so a tool body deep inside an agent framework reaches the
 * turn that runs it without the turn being passed down.
 *
 *     const escalate = witnessed("escalate_ticket", async ({ ticket }) => {
 *       if (await effects.apply(`escalate:${ticket}`, "escalate_ticket")) {
 *         // perform it, exactly once
 *       }
 *       return { escalated: ticket };
 *     });
 */

import { AsyncLocalStorage } from "node:async_hooks";

import type { Json, Request } from "./records.js";
import type { Turn } from "./serve.js";

interface Bound {
  turn: Turn;
  request: Request;
}

const current = new AsyncLocalStorage<Bound>();

/** Runs `work` with {@link effects} bound to `turn` (the server does this). */
export function bindTurn<T>(turn: Turn, request: Request, work: () => T): T {
  return current.run({ turn, request }, work);
}

function bound(): Bound {
  const found = current.getStore();
  if (found === undefined) {
    throw new Error("no turn is running: effects apply only inside a turn the server runs");
  }
  return found;
}

/** What a body's arguments show in a witness: the JSON part of them. */
function jsonOnly(value: unknown): Json {
  try {
    return JSON.parse(JSON.stringify(value ?? null)) as Json;
  } catch {
    return null;
  }
}

/** Error types a framework throws through a tool body to steer the run. */
type ErrorType = abstract new (...args: never[]) => unknown;

/** The ledger and witness of the running turn. */
export class Effects {
  private controlFlow: ErrorType[] = [];

  /**
   * Declares error types that are the framework's control flow (an
   * interrupt), not a tool's failure: {@link witnessed} lets them pass
   * without witnessing an error.
   */
  passThrough(...types: ErrorType[]): void {
    for (const type of types) if (!this.controlFlow.includes(type)) this.controlFlow.push(type);
  }

  /** Whether a turn is running here. */
  get active(): boolean {
    return current.getStore() !== undefined;
  }

  /** The request the running turn answers (a prompt's `state` is on it). */
  get request(): Request {
    return bound().request;
  }

  /**
   * Records an effect under `key` (of `tool`'s call, when named): `true`,
   * perform it now; `false`, it was applied before.
   */
  apply(key: string, tool?: string): Promise<boolean> {
    return bound().turn.ledgerApply(key, tool);
  }

  /** Records what the body of `tool` received and how it ended. */
  witness(tool: string, args: unknown, outcome: { result: unknown } | { error: string }): Promise<void> {
    const safe = "error" in outcome ? { error: outcome.error } : { result: jsonOnly(outcome.result) };
    return bound().turn.witness(tool, jsonOnly(args), safe);
  }

  /** Whether `error` is one of the declared control-flow types. */
  isControlFlow(error: unknown): boolean {
    return this.controlFlow.some((type) => error instanceof type);
  }
}

/** The ledger and witness of the turn the server is running. */
export const effects = new Effects();

/**
 * Wraps a tool body so every execution inside a turn witnesses its
 * arguments (the JSON part of its first argument: JavaScript agent
 * frameworks hand a tool its arguments as one object, and a second one is
 * their own run configuration) and its result, or its error as text (then
 * rethrown). Outside a turn the body runs unwitnessed.
 */
export function witnessed<A extends unknown[], R>(
  tool: string,
  body: (...args: A) => R | Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args: A): Promise<R> => {
    if (!effects.active) return body(...args);
    const shown = args[0];
    let result: R;
    try {
      result = await body(...args);
    } catch (error) {
      if (!effects.isControlFlow(error)) {
        const text = error instanceof Error ? error.message || error.name : String(error);
        await effects.witness(tool, shown, { error: text });
      }
      throw error;
    }
    await effects.witness(tool, shown, { result });
    return result;
  };
}
