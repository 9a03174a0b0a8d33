/**
 * A broken twin of the help desk: the supervisor's answer is read for
 * truthiness instead of validated, so `{"approved": "maybe"}`, `"true"`,
 * `1` or `"yes"` approve the escalation. The approval pack's seed (a real
 * `true`) cannot see it; its unfit-answer and type-confused-answer probes
 * must.
 */

import type { Json } from "symfonic-evals-protocol";

import { HelpDesk, main } from "../helpdesk.js";

class LaxAnswerDesk extends HelpDesk {
  protected override decide(answer: Json): boolean {
    return Boolean((answer as { approved?: unknown } | null)?.approved);
  }
}

await main((dir) => new LaxAnswerDesk(dir), import.meta.url);
