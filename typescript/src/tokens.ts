/**
 * Pause tokens: issued for a pause, bound to its conversation and question
 * id, verified, and spent exactly once, in a table under the trial's durable
 * directory, so a restarted deployment redeems what it issued and refuses
 * what it already redeemed.
 *
 * A token is 32 bytes from the operating system's CSPRNG (url-safe base64),
 * so it cannot be guessed from the ones seen before it. A
 * {@link TokenCodec} changes only how a pause's id is published: a signed
 * or JWT token is a codec, not a subclass; the table still decides
 * everything.
 *
 * A redemption, every refusal before anything is continued:
 *
 *     const pause = table.verify(request, run);   // unknown, foreign, question id, replay
 *     const approved = requireApproval(request.answer);  // before the token is spent
 *     const record = await table.redeem(pause, run, () => continueTheTurn(pause, approved));
 *
 * `redeem` claims the pause, runs the continuation, and spends the token
 * only when it finished; a continuation that throws gives the claim back, so
 * the client's retry carries it on. A claim left by a run that died (the
 * process was killed mid-resume) is taken over by the retry.
 */

import { randomBytes } from "node:crypto";
import { kill } from "node:process";

import type { Json, ResumeRequest } from "./records.js";
import { foreignToken, questionMismatch, replayed, unknownToken } from "./refusals.js";
import { DurableJson } from "./store.js";

/** The table's file name in the durable directory. */
export const PAUSE_TABLE_FILE = "symfonic-pauses.json";

/**
 * How a pause's id becomes the token a person redeems, and back. `decode`
 * returns `undefined` for anything this codec did not issue (a bad
 * signature, another shape): the redemption then refuses it as unknown
 * before anything is looked up by it.
 */
export interface TokenCodec {
  encode(id: string, claims: { conversation: string; questionId: string }): string;
  decode(token: string): string | undefined;
}

/** The token is the pause's id itself. */
export const plainCodec: TokenCodec = {
  encode: (id) => id,
  decode: (token) => token,
};

/**
 * This start of the deployment. Claims name a run, so a claim left by a
 * run whose process is gone is a client's retry and is honoured, while a
 * claim held by a live run is a concurrent or repeated redemption and is
 * refused. A run is alive while its process id answers a signal 0.
 */
export class RunLease {
  readonly id = `${process.pid}.${randomBytes(8).toString("hex")}`;

  /** Whether the run `holder` names is still running. */
  isAlive(holder: string): boolean {
    if (holder === this.id) return true;
    const pid = Number(holder.split(".")[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0) return false;
    if (pid === process.pid) return true;
    try {
      kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM";
    }
  }
}

/** A pause as stored. */
export interface PauseEntry {
  /** The pause's id (the token itself under the plain codec). */
  readonly id: string;
  /** The token published for it. */
  readonly token: string;
  readonly conversation: string;
  readonly questionId: string;
  readonly interaction: string;
  /** The calls it parked, in the deployment's own shape. */
  readonly calls: Json[];
  /** What the deployment needs to continue (a checkpoint, its id). */
  readonly handle: Json;
  /** `open`, `claimed` (a redemption is under way) or `finished` (spent). */
  readonly status: "open" | "claimed" | "finished";
  readonly claimedBy: string | null;
}

type Stored = Omit<PauseEntry, "id">;
type Document = { pauses: Record<string, Stored> };

/** What a new pause holds besides its token. */
export interface IssueInit {
  conversation: string;
  interaction: string;
  /** The id of the question asked; a fresh random one when omitted. */
  questionId?: string;
  calls?: Json[];
  handle?: Json;
}

export class PauseTable {
  private readonly document: DurableJson<Document>;
  private readonly codec: TokenCodec;

  constructor(durableDir: string, options: { codec?: TokenCodec; file?: string } = {}) {
    this.document = new DurableJson<Document>(durableDir, options.file ?? PAUSE_TABLE_FILE, () => ({ pauses: {} }));
    this.codec = options.codec ?? plainCodec;
  }

  /**
   * Stores a new open pause and returns it with its token. An open pause of
   * the same conversation and question id (one issued by an attempt that
   * died before answering) is handed out again instead.
   */
  issue(init: IssueInit): PauseEntry {
    const questionId = init.questionId ?? `q-${randomBytes(8).toString("hex")}`;
    return this.document.update((doc) => {
      if (init.questionId !== undefined) {
        for (const [id, stored] of Object.entries(doc.pauses)) {
          if (stored.conversation === init.conversation && stored.questionId === questionId && stored.status === "open") {
            return { id, ...stored };
          }
        }
      }
      const id = randomBytes(32).toString("base64url");
      const stored: Stored = {
        token: this.codec.encode(id, { conversation: init.conversation, questionId }),
        conversation: init.conversation,
        questionId,
        interaction: init.interaction,
        calls: init.calls ?? [],
        handle: init.handle ?? null,
        status: "open",
        claimedBy: null,
      };
      doc.pauses[id] = stored;
      return { id, ...stored };
    });
  }

  /** The pause the token was issued for, if this table issued it. */
  get(token: string): PauseEntry | undefined {
    if (typeof token !== "string") return undefined;
    const id = this.codec.decode(token);
    if (id === undefined) return undefined;
    const stored = this.document.read().pauses[id];
    // The published token must be exactly the one issued, not merely decode
    // to the same id (a re-encoded or re-signed look-alike).
    return stored !== undefined && stored.token === token ? { id, ...stored } : undefined;
  }

  /**
   * The pause a resume redeems; throws {@link unknownToken},
   * {@link foreignToken}, {@link questionMismatch} or, when redeeming it now
   * is a replay (finished, or claimed by a live run, this one included),
   * {@link replayed}.
   */
  verify(request: ResumeRequest, run: RunLease): PauseEntry {
    const pause = this.get(request.token);
    if (pause === undefined) throw unknownToken();
    if (pause.conversation !== request.conversation) throw foreignToken();
    if (request.questionId !== pause.questionId) throw questionMismatch();
    if (pause.status === "finished") throw replayed();
    if (pause.status === "claimed" && pause.claimedBy !== null && run.isAlive(pause.claimedBy)) throw replayed();
    return pause;
  }

  /**
   * Claims the pause for the continuation `run` is about to carry: `true`
   * for exactly one caller. A claim is taken over only from a run that is
   * gone, never from a live one and never once the pause finished.
   */
  claim(pause: PauseEntry, run: RunLease): boolean {
    return this.document.update((doc) => {
      const stored = doc.pauses[pause.id];
      if (stored === undefined || stored.status === "finished") return false;
      if (stored.status === "claimed" && stored.claimedBy !== null && run.isAlive(stored.claimedBy)) return false;
      doc.pauses[pause.id] = { ...stored, status: "claimed", claimedBy: run.id };
      return true;
    });
  }

  /** Gives back `run`'s claim after its continuation failed with an error. */
  release(pause: PauseEntry, run: RunLease): void {
    this.document.update((doc) => {
      const stored = doc.pauses[pause.id];
      if (stored?.status === "claimed" && stored.claimedBy === run.id) {
        doc.pauses[pause.id] = { ...stored, status: "open", claimedBy: null };
      }
    });
  }

  /** Spends the token for good: every later redemption is a replay. */
  spend(pause: PauseEntry): void {
    this.document.update((doc) => {
      const stored = doc.pauses[pause.id];
      if (stored !== undefined) doc.pauses[pause.id] = { ...stored, status: "finished", claimedBy: null };
    });
  }

  /**
   * Claims `pause`, runs `continuation`, and spends the token once it
   * finished; gives the claim back if it throws. Throws {@link replayed}
   * when the claim is lost to another redemption.
   */
  async redeem<T>(pause: PauseEntry, run: RunLease, continuation: () => Promise<T>): Promise<T> {
    if (!this.claim(pause, run)) throw replayed();
    let outcome: T;
    try {
      outcome = await continuation();
    } catch (error) {
      this.release(pause, run);
      throw error;
    }
    this.spend(pause);
    return outcome;
  }

  /** Every pause of `conversation`, oldest first (for a deployment's own views). */
  of(conversation: string): PauseEntry[] {
    return Object.entries(this.document.read().pauses)
      .filter(([, stored]) => stored.conversation === conversation)
      .map(([id, stored]) => ({ id, ...stored }));
  }
}

