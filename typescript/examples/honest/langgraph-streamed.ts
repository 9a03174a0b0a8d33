/**
 * An honest variant of the LangGraph.js desk: the same graph served with
 * `stream: true`, so every prompt and resume runs through `graph.stream()`
 * (drained to its end), as a deployment that streams to its users does.
 * Every pack the desk passes must pass it too: the packs, not only the
 * package's own tests, see the streamed path.
 */

import { serve } from "symfonic-evals-protocol";

import { desk } from "../langgraph/desk.js";

process.exit(await serve(desk(undefined, { stream: true })));
