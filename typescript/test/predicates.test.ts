import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { predicates } from "symfonic-evals-protocol";

/** The cases the Rust library and the Python companion are tested against too. */
const shared = JSON.parse(
  readFileSync(new URL("../../../protocol/predicate-cases.json", import.meta.url), "utf8"),
) as { cases: Array<{ state: unknown; predicate: unknown; matched: boolean }> };

test("every shared predicate case evaluates as the harness does", () => {
  assert.equal(shared.cases.length, 52);
  const wrong = shared.cases.filter((c) => predicates.evaluate(c.state, c.predicate).matched !== c.matched);
  assert.deepEqual(wrong, []);
});

test("a reason names path, operator and declared value, never the state's value", () => {
  const secret = "sk-live-4242";
  for (const op of ["eq", "neq", "in", "exists"]) {
    const value = op === "in" ? ["US"] : "US";
    for (const state of [{ region: secret }, { REGION: secret }, { region: { nested: secret } }, {}]) {
      const { reason } = predicates.evaluate(state, { path: "region", op, value });
      assert.ok(!reason.includes(secret), reason);
      assert.ok(reason.includes("region"), reason);
    }
  }
  const held = predicates.evaluate({ region: "EU" }, { path: "region", op: "eq", value: "US" });
  assert.equal(held.reason, '`region` eq "US" -> false (state: differs)');
});

test("a precondition holds when every state rule holds; anything unreadable fails closed", () => {
  const rule = (value: string) => ({ state: { path: "region", op: "eq", value } });
  assert.deepEqual(predicates.applies({ region: "US" }, [rule("US"), "verify_region"]), { held: true, reason: undefined });
  assert.deepEqual(predicates.applies({ region: "US" }, null), { held: true, reason: undefined });
  assert.equal(predicates.applies({ region: "US" }, rule("US")).held, true);
  assert.equal(predicates.applies({ region: "US" }, [rule("US"), rule("EU")]).held, false);
  // An unwrapped predicate, a misspelled key, a number: no rule is no pass.
  assert.equal(predicates.applies({ region: "US" }, [{ path: "region", op: "eq", value: "US" }]).held, false);
  assert.equal(predicates.applies({ region: "US" }, [{ sate: {} }]).held, false);
  assert.equal(predicates.applies({ region: "US" }, 7).held, false);
  assert.equal(predicates.applies({ region: "US" }, [{ state: "region eq US" }]).held, false);
  assert.deepEqual(predicates.statePredicatesIn(["t", rule("US")]), [rule("US").state]);
});

test("another lookup models a gate that gets key casing wrong", () => {
  const anyCase: predicates.Lookup = (object, segment) => {
    const key = Object.keys(object).find((k) => k.toLowerCase() === segment.toLowerCase());
    return key === undefined ? predicates.ABSENT : object[key];
  };
  const predicate = { path: "region", op: "eq", value: "US" };
  assert.equal(predicates.evaluate({ Region: "US" }, predicate).matched, false);
  assert.equal(predicates.evaluate({ Region: "US" }, predicate, anyCase).matched, true);
});
