/**
 * Speak the symfonic-evals process protocol (v1) from a TypeScript or
 * JavaScript deployment. The Rust harness starts the deployment as a child
 * process and exchanges one JSON object per line over its stdin and stdout
 * (`protocol/README.md`); this package is that conversation, so a
 * deployment only describes what it did:
 *
 *     class Desk extends Deployment {
 *       override capabilities() { return new Capabilities().capability("tools"); }
 *       override async runTurn(request: PromptRequest, turn: Turn) {
 *         if (await turn.ledgerApply("refund:3", "issue_refund")) { ... }
 *         return new TurnRecord({ answer: "done" });
 *       }
 *     }
 *     process.exit(await serve((dir) => new Desk(dir)));
 *
 * While `serve` runs, `process.stdout.write` and `console.log` go to stderr,
 * so a stray print cannot corrupt the protocol stream.
 */

export { ProtocolError, RecordError, TurnFailure } from "./errors.js";
export {
  Capabilities,
  CONCURRENT_PAUSES,
  EDITABLE_CALLS,
  editDecisions,
  Feedback,
  Pause,
  ResolvedCall,
  Role,
  Stage,
  ToolCall,
  TurnRecord,
  type EditDecision,
  type Json,
  type JsonObject,
  type PromptRequest,
  type Request,
  type ResumeRequest,
  type ReviewRequest,
  type ResetRequest,
  type StageOutcome,
  type ToolOutcome,
  type TurnRecordInit,
} from "./records.js";
export { Deployment, Turn, serve, type Factory, type ServeOptions } from "./serve.js";
export { DURABLE_DIR_ENV, PROTOCOL_VERSION, durableDir, type WitnessOutcome } from "./wire.js";
export { effects, witnessed, Effects } from "./effects.js";
export { now, nowMs } from "./clock.js";
export { canonicalJson, procedureIdentity } from "./identity.js";
export { MCP_FIXTURE, MCP_URL_ENV, mcpServerParams, mcpUrl, type McpShape } from "./mcp.js";
export {
  PAUSE_TABLE_FILE,
  PauseTable,
  RunLease,
  plainCodec,
  type IssueInit,
  type PauseEntry,
  type TokenCodec,
} from "./tokens.js";
export {
  foreignToken,
  invalidAnswer,
  questionMismatch,
  replayed,
  requireApproval,
  stale,
  unknownToken,
} from "./refusals.js";
export { DurableJson } from "./store.js";
export { PRECOMPILED, SCHEMA_URL, compileSchema, schemaViolation } from "./schema.js";
export * as predicates from "./predicates.js";
export * as wire from "./wire.js";
