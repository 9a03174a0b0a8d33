/**
 * A broken twin of the OpenAI Agents desk: the interrupted run's `RunState`
 * is kept in a map in the process, as the SDK's human-in-the-loop examples
 * keep it between the interruption and the approval, and only its key goes
 * into the pause. The token survives a restart in the table; the state it
 * continues does not.
 */

import { randomUUID } from "node:crypto";

import type { Agent, RunState } from "@openai/agents-core";

import { serve, type PauseEntry } from "symfonic-evals-protocol";
import { OpenAIAgentsDeployment } from "symfonic-evals-protocol/openai-agents";

import { build } from "../openai-agents/desk.js";

const pending = new Map<string, RunState<any, Agent<any, any>>>();

class StateInMemory extends OpenAIAgentsDeployment {
  protected override saveState(state: RunState<any, Agent<any, any>>): string {
    const key = randomUUID();
    pending.set(key, state);
    return key;
  }

  protected override async loadState(pause: PauseEntry): Promise<RunState<any, Agent<any, any>>> {
    return pending.get((pause.handle as { state: string }).state)!;
  }
}

process.exit(await serve((dir) => new StateInMemory(dir, { agent: build(), capabilities: (c) => c.trait("idempotent-effects") })));
