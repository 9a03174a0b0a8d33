/**
 * The code half of a stack trace: what a failed turn's error reports.
 *
 * An error's message may quote turn content (a prompt, a state value, a
 * token), so by default a turn error carries none of it: only the error's
 * type and the frames its stack names (file, line, function), which is what
 * tells a `TypeError` in the adopter's code from one in an adapter. A file
 * is relative to the working directory, or labelled by where it lives
 * (`<node_modules>/...`, `<node>/...`): an absolute path names a home
 * directory and a machine. The message is added only when the adopter opts
 * in with `serve(factory, { exceptionMessages: true })`.
 */

import * as path from "node:path";
import { fileURLToPath } from "node:url";

import type { JsonObject } from "./records.js";

/** How many causes (`new Error(..., { cause })`) are reported beneath the error. */
export const MAX_CAUSES = 3;

/** The longest opted-in message sent, in characters. */
export const MAX_MESSAGE_CHARS = 2000;

const FRAME = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?$/;

/** This package's own directory: its serve loop's frames are left out. */
const PACKAGE_DIR = path.dirname(fileURLToPath(import.meta.url));

/**
 * The wire form of `error`'s trace (the protocol's `exception`): its type,
 * its qualified name (JavaScript types have no module path, so the class
 * name again), its frames outermost first, and its causes; each message only
 * when `messages` is true. `undefined` when `error` is not an `Error`.
 */
export function trace(error: unknown, messages = false, causes = MAX_CAUSES): JsonObject | undefined {
  if (!(error instanceof Error)) return undefined;
  const type = typeName(error);
  const body: JsonObject = { type, qualified_name: type, frames: frames(error) };
  if (messages) body.message = error.message.slice(0, MAX_MESSAGE_CHARS);
  const cause = causes > 0 ? trace(error.cause, messages, causes - 1) : undefined;
  if (cause !== undefined) body.cause = cause;
  return body;
}

function typeName(error: Error): string {
  const constructor = (Object.getPrototypeOf(error) as { constructor?: { name?: unknown } } | null)?.constructor;
  const name = typeof constructor?.name === "string" && constructor.name ? constructor.name : error.name;
  return name || "Error";
}

/**
 * The frames `error.stack` names, outermost first, without this package's
 * own frames at the outer end. The stack's header (the error's name and
 * message) is skipped as the text `String(error)` gives; a stack that does
 * not start with it (a message changed after the error was made) yields no
 * frames rather than risk reading the message as one.
 */
function frames(error: Error): JsonObject[] {
  const stack = typeof error.stack === "string" ? error.stack : "";
  let header: string;
  try {
    header = String(error);
  } catch {
    return [];
  }
  if (!stack.startsWith(header)) return [];
  const parsed: { file: string; line: number; function: string; own: boolean }[] = [];
  for (const line of stack.slice(header.length).split("\n")) {
    const match = FRAME.exec(line);
    if (match === null) continue;
    const [, name, location, lineNumber] = match;
    const file = location!;
    parsed.push({
      file: shownPath(file),
      line: Number(lineNumber),
      function: functionName(name),
      own: isOwn(file),
    });
  }
  parsed.reverse();
  while (parsed.length > 0 && parsed[0]!.own) parsed.shift();
  return parsed.map(({ file, line, function: fn }) => ({ file, line, function: fn }));
}

function functionName(name: string | undefined): string {
  const bare = (name ?? "").replace(/^(async |new )+/, "").replace(/ \[as [^\]]+\]$/, "");
  return bare.length > 0 ? bare : "<anonymous>";
}

function absolute(file: string): string | undefined {
  if (file.startsWith("file://")) {
    try {
      return fileURLToPath(file);
    } catch {
      return undefined;
    }
  }
  return path.isAbsolute(file) ? file : undefined;
}

function isOwn(file: string): boolean {
  const full = absolute(file);
  return full !== undefined && path.dirname(full) === PACKAGE_DIR;
}

/**
 * `file` relative to the working directory, or under `node_modules`
 * (labelled), or its base name under `<elsewhere>`; never an absolute path.
 * Node's own modules (`node:internal/...`) are shown under `<node>`.
 */
export function shownPath(file: string): string {
  if (file.startsWith("node:")) return `<node>/${file.slice("node:".length)}`;
  const full = absolute(file);
  if (full === undefined) return file.includes("/") ? `<elsewhere>/${path.basename(file)}` : file;
  const modules = full.split(path.sep).lastIndexOf("node_modules");
  if (modules >= 0) {
    return `<node_modules>/${full.split(path.sep).slice(modules + 1).join("/")}`;
  }
  const cwd = process.cwd();
  const relative = path.relative(cwd, full);
  if (cwd !== path.parse(cwd).root && relative && !relative.startsWith("..") && !path.isAbsolute(relative)) {
    return relative.split(path.sep).join("/");
  }
  return `<elsewhere>/${path.basename(full)}`;
}
