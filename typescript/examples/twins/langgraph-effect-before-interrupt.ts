/**
 * A broken twin of the LangGraph desk: the escalation notifies before it
 * asks. LangGraph re-runs the node that interrupted from its start when it
 * resumes, so the notice (keyed by attempt, as a message id would be) goes
 * out at the pause, before anyone approved, and again on the resume.
 */

import { randomUUID } from "node:crypto";

import { tool } from "@langchain/core/tools";
import { interrupt } from "@langchain/langgraph";
import { z } from "zod";

import { effects, serve } from "symfonic-evals-protocol";

import { build, desk } from "../langgraph/desk.js";

const escalateTicket = tool(
  async ({ ticket }: { ticket: number }) => {
    await effects.apply(`notify:${ticket}:${randomUUID()}`, "escalate_ticket");
    const answer = interrupt({ question: `may I escalate ticket ${ticket} to a supervisor?` }) as { approved: boolean };
    if (!answer.approved) return JSON.stringify({ escalated: false });
    await effects.apply(`escalate:${ticket}`, "escalate_ticket");
    return JSON.stringify({ escalated: ticket });
  },
  { name: "escalate_ticket", description: "Escalate a ticket once a supervisor approves.", schema: z.object({ ticket: z.number() }) },
);

process.exit(await serve(desk(build([escalateTicket]))));
