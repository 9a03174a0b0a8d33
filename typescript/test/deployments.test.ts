/**
 * Deployments run as the harness runs them, child processes under node: the
 * README's quick start (extracted from the README and compiled here) and the
 * example help desk, each driven through a pause, a resume, a refused
 * replay and a restart.
 */

import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import ts from "typescript";

import { child, durable, type Line } from "./harness.js";

const root = new URL("../../", import.meta.url);

/**
 * The README's first TypeScript block, type-checked and compiled with the
 * package's own compiler settings into a module beside the build.
 */
function quickStart(): string {
  const readme = readFileSync(new URL("README.md", root), "utf8");
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, "the README has a TypeScript quick start");
  const dir = fileURLToPath(new URL("build/quickstart/", root));
  mkdirSync(dir, { recursive: true });
  const source = `${dir}quickstart.ts`;
  writeFileSync(source, block);
  const program = ts.createProgram([source], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noImplicitOverride: true,
    types: ["node"],
    typeRoots: [fileURLToPath(new URL("node_modules/@types", root))],
    rootDir: dir,
    outDir: dir,
  });
  const emitted = program.emit();
  const problems = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].map((d) =>
    ts.flattenDiagnosticMessageText(d.messageText, "\n"),
  );
  assert.deepEqual(problems, []);
  return `${dir}quickstart.js`;
}

function record(line: Line): Record<string, unknown> {
  assert.equal(line.type, "turn_record", JSON.stringify(line.error ?? null));
  return line.record as Record<string, unknown>;
}

async function pauseResumeReplay(script: string, prompt: string, gated: string): Promise<void> {
  const dir = durable();
  const first = child(script, dir);
  await first.hello();
  const paused = record(await first.prompt("c", prompt));
  const terminal = paused.terminal as { kind: string; token: string; question_id: string };
  assert.equal(terminal.kind, "paused");
  assert.equal(await first.shutdown(), 0);
  assert.equal(first.ledger.size, 0, "nothing ran before the answer");

  // A real restart: a new process on the same durable directory.
  const second = child(script, dir);
  await second.hello();
  const resume = { conversation: "c", token: terminal.token, answer: { approved: true }, question_id: terminal.question_id };
  const forged = await second.request("resume", { ...resume, token: `${terminal.token}x` });
  assert.equal((forged.error as { code: string }).code, "pause.unknown");
  const unfit = await second.request("resume", { ...resume, answer: { approved: "true" } });
  assert.equal((unfit.error as { code: string }).code, "answer.invalid");
  const resumed = record(await second.request("resume", resume));
  assert.equal((resumed.attributes as { resume_outcome: string }).resume_outcome, "resumed");
  assert.deepEqual(second.ledgerAsks.map((ask) => ask.tool), [gated]);
  assert.equal(await second.shutdown(), 0);

  const third = child(script, dir);
  await third.hello();
  const replay = await third.request("resume", resume);
  assert.deepEqual(replay.error, {
    kind: "PauseTokenReplayedError",
    message: "this pause was already redeemed",
    code: "pause.replayed",
  });
  // End of input is a shutdown.
  third.end();
  assert.equal(await third.done, 0);
}

test("the README's quick start pauses, resumes once across a restart, and refuses the replay", async () => {
  await pauseResumeReplay(quickStart(), "escalate ticket 7", "escalate_ticket");
});

test("the example help desk does the same; its refund goes through the ledger once, its weather tool witnesses itself", async () => {
  const script = fileURLToPath(new URL("build/examples/helpdesk.js", root));
  await pauseResumeReplay(script, "escalate ticket 7 to a supervisor", "escalate_ticket");

  const session = child(script);
  await session.hello();
  const refund = record(await session.prompt("c", "refund order 3"));
  assert.deepEqual(session.ledgerAsks.map((ask) => [ask.key, ask.tool]), [["refund:3", "issue_refund"]]);
  assert.deepEqual(session.witnesses.map((w) => w.outcome), [{ status: "succeeded", result: { refunded: 3 } }]);
  assert.equal((refund.tool_calls as unknown[]).length, 1);

  const weather = record(await session.prompt("w", "what is the weather in Lisbon"));
  const forecast = { city: "Lisbon", forecast: "sunny, 21 C" };
  assert.equal(weather.answer, "The weather in Lisbon: sunny, 21 C.");
  assert.ok((weather.model_input as string).includes(JSON.stringify(forecast)), "the result reaches the model");
  assert.deepEqual(session.witnesses.at(-1)?.arguments, { city: "Lisbon" });
  assert.deepEqual(session.witnesses.at(-1)?.outcome, { status: "succeeded", result: forecast });
  const again = record(await session.prompt("w", "what is the weather in Lisbon"));
  const ids = [weather, again].map((r) => (r.tool_calls as Array<{ id: string }>)[0]?.id);
  assert.notEqual(ids[0], ids[1], "call ids never repeat");
  assert.equal(await session.shutdown(), 0);
});

test("a stray print in a served child goes to stderr, not onto the protocol stream", async () => {
  const path = fileURLToPath(new URL("build/stray-print.js", root));
  writeFileSync(
    path,
    `import { Deployment, TurnRecord, serve } from "symfonic-evals-protocol";
class Noisy extends Deployment {
  async runTurn() {
    console.log("stray print");
    process.stdout.write("stray write\\n");
    return new TurnRecord({ answer: "ok" });
  }
}
process.exit(await serve((dir) => new Noisy(dir)));
`,
  );
  const session = child(path) as ReturnType<typeof child> & { stderr: string[] };
  await session.hello();
  assert.equal(record(await session.prompt("c", "hi")).answer, "ok");
  assert.equal(await session.shutdown(), 0);
  assert.match(session.stderr.join(""), /stray print\nstray write/);
});
