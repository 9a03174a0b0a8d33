/**
 * A broken twin of the help desk: the redemption never spends its token.
 * While the process that redeemed it lives, its claim still refuses a
 * replay; after a restart the claim is a dead run's and the same token
 * escalates again. The approval pack's seed cannot see it; its
 * restart-before-replay probe must.
 */

import { PauseTable, type PauseEntry } from "symfonic-evals-protocol";

import { HelpDesk, main } from "../helpdesk.js";

class NeverSpent extends PauseTable {
  override spend(_pause: PauseEntry): void {}
}

class UnspentTokenDesk extends HelpDesk {
  protected override readonly pauses = new NeverSpent(this.durableDir);
}

await main((dir) => new UnspentTokenDesk(dir), import.meta.url);
