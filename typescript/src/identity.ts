/**
 * Procedure identities exactly as the harness recomputes them.
 *
 * The procedural pack reads the procedures a review door publishes
 * (`{"tool", "precondition", "text"}`), recomputes each one's identity and
 * requires the review and enforcement ids to be those digests. The harness
 * frames the digest over the precondition as its JSON library prints it, so
 * this module prints JSON the same way: compact, keys in the order given,
 * non-ASCII text as it is, and non-integer numbers as the harness spells
 * them (`1e-6`, `0.00001`, `1e+16`).
 *
 * JavaScript keeps no difference between `3` and `3.0`: a safe integer is
 * printed as an integer. Publish integers where the precondition means one.
 */

import { createHash } from "node:crypto";

import { RecordError } from "./errors.js";

/** A non-integer (or unsafe) number as the harness prints a float. */
function float(value: number): string {
  if (!Number.isFinite(value)) throw new RecordError("number", "JSON has no NaN or infinity");
  const sign = value < 0 || Object.is(value, -0) ? "-" : "";
  if (value === 0) return `${sign}0.0`;
  // toExponential() gives the shortest digits that round-trip, as the harness does.
  const [mantissa = "", power = "0"] = Math.abs(value).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const exponent = Number(power);
  if (exponent >= 0 && exponent < 16) {
    const integer = digits.slice(0, exponent + 1).padEnd(exponent + 1, "0");
    return `${sign}${integer}.${digits.slice(exponent + 1) || "0"}`;
  }
  if (exponent >= -5 && exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
  const shown = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${shown}e${exponent > 0 ? "+" : "-"}${Math.abs(exponent)}`;
}

/** `value` as the harness's JSON library prints it compactly. */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      return Number.isSafeInteger(value) && !Object.is(value, -0) ? String(value) : float(value);
    case "string":
      return JSON.stringify(value);
    case "object":
      if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
      return `{${Object.entries(value as Record<string, unknown>)
        .map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`)
        .join(",")}}`;
    default:
      throw new RecordError("value", `a ${typeof value} is not JSON`);
  }
}

/**
 * A procedure's identity digest: hex sha256 over its governed tool, its
 * precondition as compact JSON and its text, each behind its length as eight
 * little-endian bytes, so no two splits of one text collide. Publish the
 * precondition exactly as it is hashed (same key order).
 */
export function procedureIdentity(tool: string, precondition: unknown, text: string): string {
  const digest = createHash("sha256");
  for (const part of [tool, canonicalJson(precondition), text]) {
    const data = Buffer.from(part, "utf8");
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(BigInt(data.length));
    digest.update(length);
    digest.update(data);
  }
  return digest.digest("hex");
}
