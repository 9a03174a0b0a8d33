/**
 * A broken twin of the OpenAI Agents desk: no spent mark on the pause, the
 * desk trusting the saved `RunState` to know it was resumed. It does not:
 * the state saved at the interruption still holds the approval, so every
 * resume with the token approves the call again and the SDK runs the
 * approved tool again.
 */

import { PauseTable, serve } from "symfonic-evals-protocol";
import { OpenAIAgentsDeployment } from "symfonic-evals-protocol/openai-agents";

import { build } from "../openai-agents/desk.js";

class NoSpentMark extends PauseTable {
  override claim(): boolean {
    return true;
  }

  override spend(): void {}
}

class ApprovalAppliedTwice extends OpenAIAgentsDeployment {
  protected override readonly pauses = new NoSpentMark(this.durableDir);
}

process.exit(await serve((dir) => new ApprovalAppliedTwice(dir, { agent: build(), capabilities: (c) => c.trait("idempotent-effects") })));
