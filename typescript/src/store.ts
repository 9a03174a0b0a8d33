/**
 * A JSON document kept in one file under the trial's durable directory,
 * replaced atomically on every change (written beside it, flushed to disk,
 * renamed over it), so a process killed at any moment leaves either the old
 * document or the new one, never half of one.
 *
 * Reads and writes are synchronous on purpose: Node runs one piece of
 * JavaScript at a time, so an `update` cannot interleave with another one
 * of the same process, and a read-modify-write is atomic without a lock.
 * Two processes on one durable directory at once (replicas) need a store
 * with transactions of its own.
 */

import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";

import { RecordError } from "./errors.js";

export class DurableJson<T> {
  readonly path: string;

  constructor(
    durableDir: string,
    file: string,
    private readonly empty: () => T,
  ) {
    this.path = join(durableDir, file);
    mkdirSync(dirname(this.path), { recursive: true });
  }

  /** The document as last written (a fresh empty one if none was). */
  read(): T {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return this.empty();
      throw error;
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new RecordError(this.path, "the durable document is not JSON");
    }
  }

  /** Replaces the document with `value`, durably, before returning. */
  write(value: T): void {
    const temporary = `${this.path}.${randomBytes(6).toString("hex")}.tmp`;
    const fd = openSync(temporary, "w");
    try {
      writeSync(fd, JSON.stringify(value));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.path);
  }

  /**
   * Reads, lets `change` modify the document (or return a new one) and
   * writes it back; returns what `change` returned besides.
   */
  update<R>(change: (document: T) => R): R {
    const document = this.read();
    const outcome = change(document);
    this.write(document);
    return outcome;
  }
}
