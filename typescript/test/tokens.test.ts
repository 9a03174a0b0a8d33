import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { test } from "node:test";

import {
  PauseTable,
  RunLease,
  TurnFailure,
  requireApproval,
  type ResumeRequest,
  type TokenCodec,
} from "symfonic-evals-protocol";

import { durable } from "./harness.js";

function resume(token: string, conversation = "c", questionId?: string): ResumeRequest {
  return { kind: "resume", conversation, token, answer: { approved: true }, questionId };
}

function refusedWith(code: string) {
  return (error: unknown) => error instanceof TurnFailure && error.code === code;
}

test("a token is issued, verified and spent exactly once, and survives a restart", async () => {
  const dir = durable();
  const run = new RunLease();
  const table = new PauseTable(dir);
  const pause = table.issue({ conversation: "c", interaction: "ask_user", handle: { ticket: 7 } });
  assert.match(pause.token, /^[A-Za-z0-9_-]{43}$/, "32 random bytes, url-safe");
  assert.match(pause.questionId, /^q-[0-9a-f]{16}$/);

  // A restarted process (a new table and run) finds it.
  const restarted = new PauseTable(dir);
  const found = restarted.verify(resume(pause.token, "c", pause.questionId), new RunLease());
  assert.deepEqual(found.handle, { ticket: 7 });

  const outcome = await table.redeem(found, run, async () => "continued");
  assert.equal(outcome, "continued");
  assert.throws(() => table.verify(resume(pause.token, "c", pause.questionId), run), refusedWith("pause.replayed"));
  assert.throws(
    () => new PauseTable(dir).verify(resume(pause.token, "c", pause.questionId), new RunLease()),
    refusedWith("pause.replayed"),
    "the spent mark is durable",
  );
});

test("forged, foreign and mismatched redemptions are refused before anything is spent", async () => {
  const table = new PauseTable(durable());
  const run = new RunLease();
  const pause = table.issue({ conversation: "c", interaction: "ask_user", questionId: "q-1" });
  const forged = `${pause.token.slice(0, -1)}${pause.token.endsWith("A") ? "B" : "A"}`;
  assert.throws(() => table.verify(resume(forged, "c", "q-1"), run), refusedWith("pause.unknown"));
  assert.throws(() => table.verify(resume("", "c", "q-1"), run), refusedWith("pause.unknown"));
  assert.throws(() => table.verify(resume(pause.token, "elsewhere", "q-1"), run), refusedWith("pause.foreign"));
  assert.throws(() => table.verify(resume(pause.token, "c", "q-2"), run), refusedWith("question.mismatch"));
  assert.throws(() => table.verify(resume(pause.token, "c"), run), refusedWith("question.mismatch"));
  // None of them spent it.
  const genuine = table.verify(resume(pause.token, "c", "q-1"), run);
  await table.redeem(genuine, run, async () => undefined);
});

test("two pauses get two unguessable tokens; the same open question is handed out again", () => {
  const table = new PauseTable(durable());
  const tokens = new Set<string>();
  for (let i = 0; i < 50; i += 1) tokens.add(table.issue({ conversation: `c${i % 2}`, interaction: "ask_user" }).token);
  assert.equal(tokens.size, 50);
  const first = table.issue({ conversation: "c", interaction: "ask_user", questionId: "q-7" });
  const again = table.issue({ conversation: "c", interaction: "ask_user", questionId: "q-7" });
  assert.equal(again.token, first.token, "an attempt that died before answering re-issues the same pause");
  assert.equal(table.of("c").length, 1);
});

test("a continuation that throws gives the claim back; a live claim refuses, a dead run's is taken over", async () => {
  const dir = durable();
  const table = new PauseTable(dir);
  const run = new RunLease();
  const pause = table.issue({ conversation: "c", interaction: "ask_user", questionId: "q" });
  await assert.rejects(table.redeem(pause, run, async () => Promise.reject(new Error("model down"))));
  assert.equal(table.get(pause.token)?.status, "open", "released for the client's retry");

  // Claimed by this live run: a concurrent redemption is a replay.
  assert.ok(table.claim(pause, run));
  assert.throws(() => table.verify(resume(pause.token, "c", "q"), new RunLease()), refusedWith("pause.replayed"));

  // Claimed by a run whose process is gone (killed mid-resume): the retry takes it over.
  const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
  const dead = new PauseTable(dir);
  const stale = dead.get(pause.token)!;
  dead.release(stale, run);
  const deadRun = { id: `${gone}.deadbeef`, isAlive: () => true } as unknown as RunLease;
  assert.ok(dead.claim(stale, deadRun));
  const retry = new RunLease();
  assert.equal(retry.isAlive(`${gone}.deadbeef`), false);
  const verified = new PauseTable(dir).verify(resume(pause.token, "c", "q"), retry);
  assert.equal(await new PauseTable(dir).redeem(verified, retry, async () => "retried"), "retried");
  assert.ok(retry.isAlive(retry.id));
  assert.equal(retry.isAlive("not-a-pid"), false);
});

/** An HS256 JWT codec under a per-desk secret: a hook, not a subclass. */
function jwtCodec(secret: Buffer): TokenCodec {
  const b64 = (data: Buffer | string) => Buffer.from(data).toString("base64url");
  const sign = (body: string) => createHmac("sha256", secret).update(body).digest();
  return {
    encode: (id, claims) => {
      const body = `${b64(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${b64(
        JSON.stringify({ jti: id, sub: claims.conversation, qid: claims.questionId }),
      )}`;
      return `${body}.${b64(sign(body))}`;
    },
    decode: (token) => {
      const [header, payload, signature, ...rest] = token.split(".");
      if (header === undefined || payload === undefined || signature === undefined || rest.length > 0) return undefined;
      const given = Buffer.from(signature, "base64url");
      const expected = sign(`${header}.${payload}`);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { jti?: unknown };
      return typeof claims.jti === "string" ? claims.jti : undefined;
    },
  };
}

test("a codec publishes signed tokens with no subclass, and what it did not sign is unknown", async () => {
  const dir = durable();
  const codec = jwtCodec(randomBytes(32));
  const table = new PauseTable(dir, { codec });
  const run = new RunLease();
  const pause = table.issue({ conversation: "c", interaction: "ask_user", questionId: "q" });
  assert.equal(pause.token.split(".").length, 3);
  assert.notEqual(pause.token, pause.id);
  // Signed under another secret, or the bare id: not ours.
  const other = jwtCodec(randomBytes(32)).encode(pause.id, { conversation: "c", questionId: "q" });
  assert.throws(() => table.verify(resume(other, "c", "q"), run), refusedWith("pause.unknown"));
  assert.throws(() => table.verify(resume(pause.id, "c", "q"), run), refusedWith("pause.unknown"));
  const verified = new PauseTable(dir, { codec }).verify(resume(pause.token, "c", "q"), run);
  await table.redeem(verified, run, async () => undefined);
  assert.throws(() => table.verify(resume(pause.token, "c", "q"), run), refusedWith("pause.replayed"));
});

test("the strict approval check takes exactly {approved: boolean}", () => {
  assert.equal(requireApproval({ approved: true }), true);
  assert.equal(requireApproval({ approved: false }), false);
  for (const unfit of [{ approved: "true" }, { approved: 1 }, { approved: "yes" }, { approved: true, note: "x" }, null, [true], "approved", {}]) {
    assert.throws(() => requireApproval(unfit as never), refusedWith("answer.invalid"));
  }
});
