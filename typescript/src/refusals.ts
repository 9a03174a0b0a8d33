/**
 * The typed refusals the packs expect of a redemption, with the kinds and
 * codes the reference desks answer with. None of them says anything about
 * the token or answer presented.
 */

import { TurnFailure } from "./errors.js";
import type { Json } from "./records.js";

/** No pause was issued with the token presented (a forgery, a typo). */
export function unknownToken(): TurnFailure {
  return new TurnFailure("UnknownPauseToken", "no pause was issued with this token", "pause.unknown");
}

/** The token belongs to a pause of another conversation. */
export function foreignToken(): TurnFailure {
  return new TurnFailure("ForeignPauseToken", "this pause belongs to another conversation", "pause.foreign");
}

/** The question id handed back is not the one the pause published. */
export function questionMismatch(): TurnFailure {
  return new TurnFailure("QuestionMismatch", "the answer addresses another question", "question.mismatch");
}

/** The pause was already redeemed (or is being redeemed right now). */
export function replayed(): TurnFailure {
  return new TurnFailure("PauseTokenReplayedError", "this pause was already redeemed", "pause.replayed");
}

/** The deployment no longer holds the pause the token was issued for. */
export function stale(): TurnFailure {
  return new TurnFailure("StalePauseToken", "the conversation no longer waits on this pause", "pause.stale");
}

/** The answer does not fit the question; the token stays redeemable. */
export function invalidAnswer(message = "the answer says only whether it is approved"): TurnFailure {
  return new TurnFailure("InvalidAnswer", message, "answer.invalid");
}

/**
 * The strict approval check: exactly `{"approved": true|false}`, no
 * look-alikes (`"true"`, `1`, `"yes"`). Returns the decision; throws
 * {@link invalidAnswer}.
 */
export function requireApproval(answer: Json): boolean {
  if (
    typeof answer !== "object" ||
    answer === null ||
    Array.isArray(answer) ||
    Object.keys(answer).length !== 1 ||
    typeof answer.approved !== "boolean"
  ) {
    throw invalidAnswer();
  }
  return answer.approved;
}
