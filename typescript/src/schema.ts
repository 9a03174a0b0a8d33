/**
 * The protocol's normative shapes, `protocol/v1.schema.json`, compiled with
 * ajv (by the build, ahead of time). Every message this package writes is checked against
 * `child_message` before it is written, and every message it reads (its
 * known fields: receivers ignore unknown ones) against `harness_message`, so
 * the package cannot drift from the schema the Rust harness and the Python
 * companion are tested against.
 */

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { ErrorObject, ValidateFunction } from "ajv";

const require = createRequire(import.meta.url);

/** The schema as published beside the compiled package. */
export const SCHEMA_URL = new URL("./v1.schema.json", import.meta.url);

type Definition = "harness_message" | "child_message";

/**
 * The validators the build compiled ahead of time (`dist/validators.js`,
 * from the same schema), or `undefined` where they are missing (a build
 * that skipped that step): the schema is then compiled at first use.
 */
const precompiled = (await import(new URL("./validators.js", import.meta.url).href).catch(() => undefined)) as
  | Record<Definition, ValidateFunction>
  | undefined;

let compiled: Record<Definition, ValidateFunction> | undefined;

/** Compiles the published schema here, as the build does. */
export function compileSchema(): Record<Definition, ValidateFunction> {
  // ajv ships CommonJS; its draft 2020-12 build is the one this schema
  // needs. Loaded only here: the precompiled validators need none of it.
  const Ajv2020 = require("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js").default;
  const schema = JSON.parse(readFileSync(SCHEMA_URL, "utf8")) as Record<string, unknown>;
  const ajv = new Ajv2020({ allErrors: false, strict: false });
  ajv.addSchema(schema, "v1");
  const get = (name: Definition): ValidateFunction => {
    const validate = ajv.getSchema(`v1#/$defs/${name}`);
    if (validate === undefined) throw new Error(`the protocol schema has no ${name}`);
    return validate;
  };
  return { harness_message: get("harness_message"), child_message: get("child_message") };
}

/** Whether the validators in use were compiled by the build. */
export const PRECOMPILED = precompiled !== undefined;

function validators(): Record<Definition, ValidateFunction> {
  compiled ??= precompiled ?? compileSchema();
  return compiled;
}

/**
 * Why `value` is not a `definition`, in words that quote no value, or
 * `undefined` when it is one. The place is a JSON pointer into the message
 * (fields the schema names, array indices); ajv's parameters (which may hold
 * an unknown field's name) are never shown.
 */
export function schemaViolation(definition: Definition, value: unknown): string | undefined {
  const validate = validators()[definition];
  if (validate(value)) return undefined;
  return describe(validate.errors ?? []);
}

function describe(errors: ErrorObject[]): string {
  // Under a oneOf every branch reports; the deepest place is the one that
  // says most about what is wrong.
  const deepest = [...errors].sort(
    (a, b) => b.instancePath.split("/").length - a.instancePath.split("/").length,
  )[0];
  if (deepest === undefined) return "does not match the protocol schema";
  const where = deepest.instancePath === "" ? "the message" : deepest.instancePath;
  return `${where}: ${RULES[deepest.keyword] ?? `fails the schema's ${deepest.keyword} rule`}`;
}

const RULES: Record<string, string> = {
  type: "has the wrong JSON type",
  required: "lacks a required field",
  additionalProperties: "holds a field the protocol does not define",
  const: "is not the value the protocol fixes here",
  enum: "is not one of the values the protocol allows",
  minLength: "is shorter than the protocol allows",
  maxLength: "is longer than the protocol allows",
  minimum: "is below the protocol's minimum",
  minItems: "has fewer items than the protocol allows",
  uniqueItems: "repeats an item",
  oneOf: "matches none of the shapes the protocol allows here",
};
