/**
 * State predicates: does an approved procedure's precondition hold here?
 *
 * The semantics of the Rust library's `contracts` module, so a TypeScript
 * gate and the harness's gate sweep agree on every rule (all three
 * evaluators are tested against `protocol/predicate-cases.json`):
 *
 * - a predicate is `{"path": "a.b", "op": "eq"|"neq"|"in"|"exists", "value": ...}`;
 * - each path segment is looked up as its UPPER-case spelling, then its
 *   lower-case spelling; a key in any other casing is absent;
 * - values compare as JSON: `true` never equals `1`, strings compare exactly;
 * - anything malformed fails closed (the rule does not admit);
 * - an absent key fails every operator that takes a value, `neq` included;
 * - `in` needs an array, never a string (which would substring-match);
 * - reasons name the path, the operator and the declared value, never the
 *   value the state held.
 *
 * JavaScript has one number type, so `3` and `3.0` are the same value here,
 * as they are equal to the harness.
 */

export const OPERATORS = ["eq", "neq", "in", "exists"] as const;

/** What a lookup returns for a key the state does not hold. */
export const ABSENT: unique symbol = Symbol("absent");

/** How one path segment is looked up in an object: its value, or `ABSENT`. */
export type Lookup = (object: Record<string, unknown>, segment: string) => unknown;

/** Whether a predicate matched, and a reason that quotes no state. */
export interface Outcome {
  readonly matched: boolean;
  readonly reason: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The contract's key casing: the segment in UPPER case, then lower case; any
 * other spelling is absent.
 */
export const contractLookup: Lookup = (object, segment) => {
  for (const key of [segment.toUpperCase(), segment.toLowerCase()]) {
    if (Object.hasOwn(object, key)) return object[key];
  }
  return ABSENT;
};

/** Walks `state` along a dotted path; `ABSENT` when any step fails. */
export function resolvePath(state: unknown, path: unknown, lookup: Lookup = contractLookup): unknown {
  if (typeof path !== "string" || path.length === 0) return ABSENT;
  let cursor = state;
  for (const segment of path.split(".")) {
    if (segment.length === 0 || !isObject(cursor)) return ABSENT;
    cursor = lookup(cursor, segment);
    if (cursor === ABSENT) return ABSENT;
  }
  return cursor;
}

/** JSON equality: a boolean never equals a number; arrays in order; objects by key set. */
export function jsonEqual(left: unknown, right: unknown): boolean {
  if (Array.isArray(left) || Array.isArray(right)) {
    return (
      Array.isArray(left) &&
      Array.isArray(right) &&
      left.length === right.length &&
      left.every((item, i) => jsonEqual(item, right[i]))
    );
  }
  if (isObject(left) || isObject(right)) {
    if (!isObject(left) || !isObject(right)) return false;
    const keys = Object.keys(left);
    return (
      keys.length === Object.keys(right).length &&
      keys.every((key) => Object.hasOwn(right, key) && jsonEqual(left[key], right[key]))
    );
  }
  return typeof left === typeof right && left === right;
}

/** Answers one predicate against `state`, failing closed on anything odd. */
export function evaluate(state: unknown, predicate: unknown, lookup: Lookup = contractLookup): Outcome {
  if (!isObject(predicate)) return { matched: false, reason: "predicate must be an object" };
  const { path, op } = predicate;
  if (typeof path !== "string" || path.length === 0) {
    return { matched: false, reason: "missing or empty `path`" };
  }
  if (typeof op !== "string" || !(OPERATORS as readonly string[]).includes(op)) {
    return { matched: false, reason: `unknown operator (allowed: ${OPERATORS.join(", ")})` };
  }
  const resolved = resolvePath(state, path, lookup);
  if (op === "exists") {
    const present = resolved !== ABSENT;
    return { matched: present, reason: `\`${path}\` exists -> ${present}` };
  }
  if (!Object.hasOwn(predicate, "value")) {
    return { matched: false, reason: `operator \`${op}\` requires \`value\`` };
  }
  const declared = predicate.value;
  const shown = JSON.stringify(declared);
  if (op === "in" && !Array.isArray(declared)) {
    return { matched: false, reason: "`in` requires an array value" };
  }
  if (resolved === ABSENT) {
    return { matched: false, reason: `\`${path}\` ${op} ${shown} -> false (state: absent)` };
  }
  const same =
    op === "in" ? (declared as unknown[]).some((member) => jsonEqual(member, resolved)) : jsonEqual(resolved, declared);
  const matched = op === "neq" ? !same : same;
  const compared = same ? "matches" : "differs";
  return { matched, reason: `\`${path}\` ${op} ${shown} -> ${matched} (state: ${compared})` };
}

/** The entries of a precondition written as none, one entry, or a list. */
function entries(precondition: unknown): unknown[] | undefined {
  if (precondition === null || precondition === undefined) return [];
  if (Array.isArray(precondition)) return precondition;
  if (isObject(precondition) || typeof precondition === "string") return [precondition];
  return undefined;
}

/**
 * The `{"state": ...}` entries of a precondition, unwrapped. Bare tool names
 * are a different question and are skipped; a single `{"state": ...}` object
 * counts as a one-entry list; a `state` that is not an object is kept, so
 * that it fails closed when evaluated.
 */
export function statePredicatesIn(precondition: unknown): unknown[] {
  return (entries(precondition) ?? [])
    .filter((entry): entry is Record<string, unknown> => isObject(entry) && Object.hasOwn(entry, "state"))
    .map((entry) => entry.state);
}

/**
 * Whether every state predicate holds, and the first failing reason. An
 * entry that is neither a bare tool name nor a `{"state": ...}` rule (an
 * unwrapped predicate, a misspelled key) fails closed: a rule nobody can
 * read must not quietly become no rule at all.
 */
export function applies(
  state: unknown,
  precondition: unknown,
  lookup: Lookup = contractLookup,
): { held: boolean; reason: string | undefined } {
  const list = entries(precondition);
  if (
    list === undefined ||
    !list.every((entry) => typeof entry === "string" || (isObject(entry) && Object.hasOwn(entry, "state")))
  ) {
    return { held: false, reason: "precondition holds an entry that is not a rule" };
  }
  for (const predicate of statePredicatesIn(precondition)) {
    const outcome = evaluate(state, predicate, lookup);
    if (!outcome.matched) return { held: false, reason: outcome.reason };
  }
  return { held: true, reason: undefined };
}
