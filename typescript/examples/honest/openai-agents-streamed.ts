/**
 * An honest variant of the Agents desk: the same agent served with
 * `stream: true`, so every run is the SDK's streamed run (its model's
 * streamed responses journaled for a retry), drained to its end, as a
 * deployment that streams to its users does. Every pack the desk passes
 * must pass it too: the packs, not only the package's own tests, see the
 * streamed path.
 */

import { serve } from "symfonic-evals-protocol";

import { desk } from "../openai-agents/desk.js";

process.exit(await serve(desk(undefined, { stream: true })));
