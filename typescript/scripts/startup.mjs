// Start-up cost of each example desk, as the harness pays it at every
// start and restart: from spawn to the `ready` line, a fresh `node` each
// time. Prints the median and range of N runs per desk (default 20) beside
// a bare `node` answering at once. Run after `npm run build:test`:
//
//     node scripts/startup.mjs [N]

import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const runs = Number(process.argv[2] ?? 20);
const root = fileURLToPath(new URL("../", import.meta.url));
const bare = ["-e", "process.stdin.once('data', () => { process.stdout.write('{\"type\":\"ready\"}\\n'); process.exit(0); })"];
const desks = [
  ["node answering at once", bare],
  ["helpdesk.ts", [join(root, "build/examples/helpdesk.js")]],
  ["langgraph/desk.ts", [join(root, "build/examples/langgraph/desk.js")]],
  ["openai-agents/desk.ts", [join(root, "build/examples/openai-agents/desk.js")]],
];

function once(args) {
  return new Promise((resolve, reject) => {
    const dir = mkdtempSync(join(tmpdir(), "symfonic-startup-"));
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
    // The bare node exits once it answered: its stdin may be gone by the shutdown.
    child.stdin.on("error", () => {});
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (!out.includes("\n")) return;
      const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
      if (!out.startsWith('{"type":"ready"')) reject(new Error(`not a ready line: ${out.slice(0, 80)}`));
      child.stdin.end(JSON.stringify({ type: "shutdown" }) + "\n");
      child.on("exit", () => resolve(elapsed));
    });
    child.stdin.write(JSON.stringify({ type: "hello", protocol_versions: [1], durable_dir: dir, trial: 0 }) + "\n");
  });
}

for (const [name, args] of desks) {
  const times = [];
  for (let i = 0; i < runs; i += 1) times.push(await once(args));
  times.sort((a, b) => a - b);
  const median = times.length % 2 ? times[(times.length - 1) / 2] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  console.log(`${name}: median ${median.toFixed(0)} ms of ${runs} (${times[0].toFixed(0)}-${times.at(-1).toFixed(0)} ms)`);
}
