/**
 * The Rust harness's own conformance check against this package's example
 * desk, run through the harness's command line (`symfonic-evals
 * conformance -- node build/examples/helpdesk.js`): the package is held to
 * what the harness checks, not only to this suite's reading of the schema.
 *
 * The command line is `$SYMFONIC_EVALS_CLI` when set, else built and run
 * with `cargo` from the repository this package sits in. Where neither is
 * available (the package installed on its own), the test is skipped and
 * says why.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = new URL("../../", import.meta.url);
const repository = new URL("../", root);

/** The command that runs the harness's command line, or why there is none. */
function harness(): { command: string; args: string[] } | string {
  const cli = process.env.SYMFONIC_EVALS_CLI;
  if (cli) {
    return { command: cli, args: [] };
  }
  if (!existsSync(fileURLToPath(new URL("Cargo.toml", repository)))) {
    return "not inside the symfonic-evals repository, and SYMFONIC_EVALS_CLI is not set";
  }
  const cargo = spawnSync("cargo", ["--version"], { encoding: "utf8" });
  if (cargo.status !== 0) {
    return "`cargo` is not on PATH, and SYMFONIC_EVALS_CLI is not set";
  }
  return {
    command: "cargo",
    args: ["run", "--quiet", "-p", "symfonic-evals", "--bin", "symfonic-evals", "--"],
  };
}

test("the harness's conformance check passes the example desk", (t) => {
  const found = harness();
  if (typeof found === "string") {
    t.skip(found);
    return;
  }
  const desk = fileURLToPath(new URL("build/examples/helpdesk.js", root));
  const run = spawnSync(
    found.command,
    [...found.args, "conformance", "--effect-prompt", "refund order 3", "--", process.execPath, desk],
    { cwd: fileURLToPath(repository), encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
  );
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  // Every check ran and passed, the ledger round trip included.
  const checks = run.stdout.split("\n").filter((line) => /^\s+(ok|FAIL|skip|--)\s/.test(line));
  assert.ok(checks.length >= 6, run.stdout);
  assert.ok(checks.every((line) => line.trimStart().startsWith("ok ")), run.stdout);
  assert.match(run.stdout, /ok\s+ledger round trip/);
});
