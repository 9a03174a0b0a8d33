/**
 * A broken twin of the LangGraph desk: the graph is compiled with
 * LangGraph's in-memory saver instead of the durable one the adapter hands
 * it, so its run state lives only in the process. The pause survives a
 * restart in the token table, but the checkpoint it continues from does not.
 */

import { MemorySaver } from "@langchain/langgraph";

import { serve } from "symfonic-evals-protocol";

import { build, desk } from "../langgraph/desk.js";

process.exit(await serve(desk(() => build()(new MemorySaver()))));
