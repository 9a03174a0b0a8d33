/**
 * A LangGraph.js checkpointer that keeps its checkpoints under the trial's
 * durable directory, so a restarted process resumes the graph where the
 * last one paused. It is LangGraph's own in-memory saver, written through
 * to one JSON file after every change (atomically, with the package's
 * {@link DurableJson}) and read back when it is built: no native module,
 * nothing to install beside LangGraph.
 *
 * A saver kept only in memory (`new MemorySaver()`) is the failure this
 * exists to avoid: every checkpoint is gone after a restart, and the pack
 * that restarts between the pause and the resume finds nothing to continue.
 */

import { MemorySaver } from "@langchain/langgraph";
import type { Checkpoint, CheckpointMetadata } from "@langchain/langgraph";
import type { PendingWrite } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";

import { DurableJson } from "../store.js";

/** The saver's file name in the durable directory. */
export const CHECKPOINT_FILE = "symfonic-langgraph-checkpoints.json";

type Snapshot = { storage: unknown; writes: unknown };

/** Byte arrays (LangGraph's serialised values) as tagged base64 in JSON. */
function encode(value: unknown): unknown {
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString("base64") };
  if (Array.isArray(value)) return value.map(encode);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, encode(item)]));
  }
  return value;
}

function decode(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decode);
  if (typeof value === "object" && value !== null) {
    const bytes = (value as { $bytes?: unknown }).$bytes;
    if (typeof bytes === "string" && Object.keys(value).length === 1) {
      return new Uint8Array(Buffer.from(bytes, "base64"));
    }
    // LangGraph keys its storage with objects without a prototype.
    const rebuilt = Object.create(null) as Record<string, unknown>;
    for (const [key, item] of Object.entries(value)) rebuilt[key] = decode(item);
    return rebuilt;
  }
  return value;
}

export class DurableSaver extends MemorySaver {
  private readonly file: DurableJson<Snapshot>;

  constructor(durableDir: string, file = CHECKPOINT_FILE) {
    super();
    this.file = new DurableJson<Snapshot>(durableDir, file, () => ({ storage: {}, writes: {} }));
    const snapshot = this.file.read();
    this.storage = decode(snapshot.storage) as MemorySaver["storage"];
    this.writes = decode(snapshot.writes) as MemorySaver["writes"];
  }

  private persist(): void {
    this.file.write({ storage: encode(this.storage), writes: encode(this.writes) });
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    const saved = await super.put(config, checkpoint, metadata);
    this.persist();
    return saved;
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    await super.putWrites(config, writes, taskId, taskPath);
    this.persist();
  }

  override async deleteThread(threadId: string): Promise<void> {
    await super.deleteThread(threadId);
    this.persist();
  }
}
