"""The help desk's durable store: one SQLite file in the trial's durable dir.

Everything a restart must not lose lives here: the episodes every user turn
leaves, the procedures promoted from them and their review status, pauses
with their single-use tokens, question ids and checkpoints, the counter call
ids are drawn from, and the effects actually performed (refunds issued,
tickets escalated), which the harness's effect oracle counts.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import sqlite3
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set

from symfonic_evals_protocol import procedure_identity

STORE_FILE = "helpdesk.sqlite3"
"""The store's file name in the durable directory (the effect oracle opens it)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (
    id INTEGER PRIMARY KEY, conversation TEXT NOT NULL, lesson TEXT);
CREATE TABLE IF NOT EXISTS procedures (
    id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE, status TEXT NOT NULL,
    action_tool TEXT NOT NULL DEFAULT '', precondition TEXT NOT NULL DEFAULT 'null',
    conversation TEXT NOT NULL, name TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS pauses (
    token TEXT PRIMARY KEY, conversation TEXT NOT NULL, interaction TEXT NOT NULL,
    call_id TEXT NOT NULL, question_id TEXT NOT NULL, checkpoint TEXT,
    consumed INTEGER NOT NULL DEFAULT 0, claimed_by TEXT);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS lesson_totals (lesson TEXT PRIMARY KEY, total INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS refunds (ord INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS escalations (ticket INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS notices (key TEXT PRIMARY KEY);
"""


class RunLease:
    """This start of the desk, alive while the process is.

    The run holds an exclusive lock on its own file under ``runs/`` in the
    durable directory; the operating system drops it when the process dies,
    so "the claimant's lock can be taken" means "the claimant is gone", with
    no clock and no timeout."""

    def __init__(self, durable_dir: str) -> None:
        self._dir = os.path.join(durable_dir, "runs")
        os.makedirs(self._dir, exist_ok=True)
        self.id = secrets.token_hex(8)
        self._held = open(os.path.join(self._dir, f"{self.id}.lock"), "w")
        fcntl.flock(self._held, fcntl.LOCK_EX)

    def is_alive(self, run: str) -> bool:
        """Whether the run named ``run`` still holds its lease; a run with no
        lease file counts as gone, an unreadable one as alive (refusing a
        retry is safe, admitting a concurrent redemption is not)."""
        try:
            probe = open(os.path.join(self._dir, f"{run}.lock"))
        except FileNotFoundError:
            return False
        except OSError:
            return True
        with probe:
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            except OSError:
                return True
            fcntl.flock(probe, fcntl.LOCK_UN)
            return False

    def close(self) -> None:
        """Gives the lease up."""
        self._held.close()


@dataclass(frozen=True)
class Procedure:
    """One learned procedure as the review door shows it."""

    id: int
    text: str
    status: str
    action_tool: str
    precondition: Any
    conversation: str
    name: str = ""

    def identity(self) -> str:
        """The digest the harness recomputes from what the review door
        publishes, so review and gate name the procedure by its content."""
        return procedure_identity(self.action_tool, self.precondition, self.text)

    def published(self) -> Dict[str, Any]:
        """The procedure as data, in the shape the procedural pack reads."""
        return {"tool": self.action_tool, "precondition": self.precondition, "text": self.text}


@dataclass(frozen=True)
class PauseRow:
    """A pause as stored: its token, whom it asked, the parked call, the
    question's id, where to continue, and how far its redemption got:
    ``consumed`` once any redemption claimed it, ``finished`` once the
    continuation was done, ``claimed_by`` naming the run that claimed it."""

    token: str
    conversation: str
    interaction: str
    call_id: str
    question_id: str
    checkpoint: Any
    consumed: bool
    finished: bool
    claimed_by: Optional[str]


class Store:
    """Thin, explicit SQL over one connection; every write commits before
    the turn answers."""

    def __init__(self, durable_dir: str) -> None:
        self._db = sqlite3.connect(os.path.join(durable_dir, STORE_FILE))
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        """Closes the connection."""
        self._db.close()

    # -- memory: episodes and consolidation ---------------------------------

    def record_episode(self, conversation: str, lesson: Optional[str]) -> None:
        """Keeps one user turn; ``lesson`` is what it taught, if anything."""
        with self._db:
            self._db.execute(
                "INSERT INTO episodes (conversation, lesson) VALUES (?, ?)", (conversation, lesson)
            )

    def episode_count(self) -> int:
        """How many user turns the desk has kept."""
        return int(self._db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])

    def consolidate(self, conversation: str, minimum: int = 2, since_first_seen: bool = False) -> int:
        """Promotes every lesson seen ``minimum`` times into a draft procedure
        learned in ``conversation``; returns how many this cycle promoted.
        ``since_first_seen`` (a twin's) counts every episode kept since the
        lesson was first seen instead of the episodes that showed it."""
        support = (
            "(SELECT COUNT(*) FROM episodes AS later WHERE later.id >= MIN(episodes.id))"
            if since_first_seen
            else "COUNT(*)"
        )
        with self._db:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO procedures (text, status, conversation) "
                "SELECT lesson, 'draft', ? FROM episodes WHERE lesson IS NOT NULL "
                f"GROUP BY lesson HAVING {support} >= ? ORDER BY MIN(id)",
                (conversation, minimum),
            )
            return max(cursor.rowcount, 0)

    def consolidate_total(self, conversation: str, lesson: Optional[str], minimum: int = 2) -> int:
        """Running totals (the ``running-totals`` variant's): adds this
        turn's lesson to its total kept in the store and promotes it into a
        draft learned in ``conversation`` once the total reaches
        ``minimum``; returns how many this cycle promoted."""
        if lesson is None:
            return 0
        with self._db:
            self._db.execute(
                "INSERT INTO lesson_totals (lesson, total) VALUES (?, 1) "
                "ON CONFLICT (lesson) DO UPDATE SET total = total + 1",
                (lesson,),
            )
            (total,) = self._db.execute("SELECT total FROM lesson_totals WHERE lesson = ?", (lesson,)).fetchone()
            if total < minimum:
                return 0
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO procedures (text, status, conversation) VALUES (?, 'draft', ?)",
                (lesson, conversation),
            )
            return max(cursor.rowcount, 0)

    def procedures(self) -> List[Procedure]:
        """Every procedure, oldest first (the review door's listing)."""
        rows = self._db.execute(
            "SELECT id, text, status, action_tool, precondition, conversation, name "
            "FROM procedures ORDER BY id"
        )
        return [Procedure(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6]) for r in rows]

    def approve(self, procedure_id: int, tool: str, precondition: Any, name: str = "") -> None:
        """Marks a draft approved, naming the tool it governs and its
        precondition, under the operator's ``name`` when it gave one."""
        with self._db:
            self._db.execute(
                "UPDATE procedures SET status = 'approved', action_tool = ?, precondition = ?, name = ? "
                "WHERE id = ?",
                (tool, json.dumps(precondition), name, procedure_id),
            )

    def amend(self, name: str, precondition: Any) -> bool:
        """Replaces the precondition of the approved procedure ``name``;
        returns whether one was."""
        with self._db:
            cursor = self._db.execute(
                "UPDATE procedures SET precondition = ? WHERE name = ? AND name != '' AND status = 'approved'",
                (json.dumps(precondition), name),
            )
            return cursor.rowcount == 1

    def revoke(self, name: str) -> bool:
        """Withdraws the approved procedure ``name``; returns whether one was."""
        with self._db:
            cursor = self._db.execute(
                "UPDATE procedures SET status = 'revoked' WHERE name = ? AND name != '' AND status = 'approved'",
                (name,),
            )
            return cursor.rowcount == 1

    def record_guardrail(self, lesson: str) -> None:
        """Keeps a rejected demonstration's lesson as a guardrail ("never
        ..."): a row reviewers see, governing no tool, never recalled, and
        under a text of its own, so the lesson itself can still be learned
        from turns nobody rejected."""
        with self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO procedures (text, status, conversation) VALUES (?, 'guardrail', '')",
                (f"never as rejected: {lesson}",),
            )

    def reject(self, procedure_id: int, forget: bool = False) -> None:
        """Marks a draft rejected; its row stays on file, so consolidation
        never drafts the lesson again (the ``rejected-draft-redrafted`` twin
        ``forget``s it instead: the row is deleted)."""
        with self._db:
            if forget:
                self._db.execute("DELETE FROM procedures WHERE id = ? AND status = 'draft'", (procedure_id,))
            else:
                self._db.execute(
                    "UPDATE procedures SET status = 'rejected' WHERE id = ? AND status = 'draft'", (procedure_id,)
                )

    def redraft(self, lesson: str) -> None:
        """Sets the procedure learned from ``lesson`` back to a fresh draft
        (only the ``relearn-redrafts-approved`` twin does)."""
        with self._db:
            self._db.execute(
                "UPDATE procedures SET status = 'draft', action_tool = '', precondition = 'null', "
                "name = '' WHERE text = ?",
                (lesson,),
            )

    def restore_revoked(self, lesson: str) -> None:
        """Brings the revoked procedure learned from ``lesson`` back
        approved, its tool and rule as they were (only the
        ``relearn-restores-revoked`` twin does)."""
        with self._db:
            self._db.execute("UPDATE procedures SET status = 'approved' WHERE text = ? AND status = 'revoked'", (lesson,))

    # -- call ids ------------------------------------------------------------

    def next_call_number(self) -> int:
        """A number no earlier call of this trial drew, across restarts."""
        return self.next_number("calls")

    def next_number(self, counter: str) -> int:
        """The next number of the durable counter ``counter``, across restarts."""
        with self._db:
            self._db.execute(
                "INSERT INTO counters (name, value) VALUES (?, 1) "
                "ON CONFLICT(name) DO UPDATE SET value = value + 1",
                (counter,),
            )
            return int(self._db.execute("SELECT value FROM counters WHERE name = ?", (counter,)).fetchone()[0])

    def counter(self, counter: str) -> int:
        """The durable counter ``counter``'s value, 0 before its first draw."""
        row = self._db.execute("SELECT value FROM counters WHERE name = ?", (counter,)).fetchone()
        return 0 if row is None else int(row[0])

    # -- effects the ledger admitted ------------------------------------------

    def record_refund(self, order: int) -> None:
        """Issues a refund (once per order)."""
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO refunds (ord) VALUES (?)", (order,))

    def record_escalation(self, ticket: int) -> None:
        """Escalates a ticket (once per ticket)."""
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO escalations (ticket) VALUES (?)", (ticket,))

    def record_notice(self, key: str) -> None:
        """Sends a notice of the desk's own (once per key)."""
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO notices (key) VALUES (?)", (key,))

    # -- pauses ----------------------------------------------------------------

    def save_pause(
        self,
        token: str,
        conversation: str,
        interaction: str,
        call_id: str,
        question_id: str,
        checkpoint: Any,
    ) -> None:
        """Stores a pause; ``checkpoint`` ``None`` stores none."""
        stored = None if checkpoint is None else json.dumps(checkpoint)
        with self._db:
            self._db.execute(
                "INSERT INTO pauses (token, conversation, interaction, call_id, question_id, checkpoint) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (token, conversation, interaction, call_id, question_id, stored),
            )

    def forget_pauses(self) -> None:
        """Drops every stored pause."""
        with self._db:
            self._db.execute("DELETE FROM pauses")

    def forget_pending(self, conversation: str) -> int:
        """Forgets every pause of ``conversation`` still waiting for an
        answer (unspent and unclaimed), for a reset: their tokens are then
        unknown. A redemption under way keeps its claim and may finish.
        Returns how many it forgot."""
        with self._db:
            cursor = self._db.execute("DELETE FROM pauses WHERE conversation = ? AND consumed = 0", (conversation,))
            return cursor.rowcount

    def _pause(self, where: str, key: str) -> Optional[PauseRow]:
        row = self._db.execute(
            "SELECT token, conversation, interaction, call_id, question_id, checkpoint, consumed, claimed_by "
            f"FROM pauses WHERE {where} = ? ORDER BY rowid DESC LIMIT 1",
            (key,),
        ).fetchone()
        if row is None:
            return None
        checkpoint = None if row[5] is None else json.loads(row[5])
        return PauseRow(row[0], row[1], row[2], row[3], row[4], checkpoint, row[6] != 0, row[6] == 1, row[7])

    def pause(self, token: str) -> Optional[PauseRow]:
        """The pause a token was issued for, if any."""
        return self._pause("token", token)

    def latest_pause(self, conversation: str) -> Optional[PauseRow]:
        """The latest pause of a conversation, if any."""
        return self._pause("conversation", conversation)

    def consume(self, token: str) -> bool:
        """Spends a token for good; ``False`` when it was already spent.
        Atomic, so two redemptions racing on one token cannot both win, but
        a crash in the continuation then loses the turn: the asyncio desk
        (which claims no exactly-once effects) and the
        ``resume-not-retriable`` twin spend this way."""
        with self._db:
            cursor = self._db.execute(
                "UPDATE pauses SET consumed = 1 WHERE token = ? AND consumed = 0", (token,)
            )
            return cursor.rowcount == 1

    def tokens_of(self, conversation: str) -> List[str]:
        """Every token issued in a conversation, latest first: the
        ``pauses-answered-last-first`` twin's stack."""
        rows = self._db.execute("SELECT token FROM pauses WHERE conversation = ? ORDER BY rowid DESC", (conversation,))
        return [row[0] for row in rows]

    def pending_tokens(self) -> List[str]:
        """Every token no redemption has claimed yet, oldest first: the
        ``approval-grants-every-pending`` twin's queue."""
        return [row[0] for row in self._db.execute("SELECT token FROM pauses WHERE consumed = 0 ORDER BY rowid")]

    def finished_tokens(self) -> Set[str]:
        """The tokens whose continuation finished: the blocklist the
        ``spent-tokens-loaded-at-start`` twin loads when it opens."""
        return {row[0] for row in self._db.execute("SELECT token FROM pauses WHERE consumed = 1")}

    def record_claim(self, token: str, run: "RunLease") -> None:
        """Records ``run``'s claim without checking it (that twin trusts
        its blocklist instead)."""
        with self._db:
            self._db.execute("UPDATE pauses SET consumed = 2, claimed_by = ? WHERE token = ?", (run.id, token))

    def claim(self, token: str, run: "RunLease") -> bool:
        """Claims a token for the continuation ``run`` is about to carry:
        ``True`` for exactly one of any number of concurrent callers. A
        claim is taken over only from a run that no longer holds its lease
        (it died mid-continuation), never from a live one and never once
        the continuation finished."""
        with self._db:
            cursor = self._db.execute(
                "UPDATE pauses SET consumed = 2, claimed_by = ? WHERE token = ? AND consumed = 0",
                (run.id, token),
            )
            if cursor.rowcount == 1:
                return True
            row = self._db.execute(
                "SELECT claimed_by FROM pauses WHERE token = ? AND consumed = 2", (token,)
            ).fetchone()
            holder = None if row is None else row[0]
            if holder is None or holder == run.id or run.is_alive(holder):
                return False
            # The guard on the old holder makes the takeover atomic too.
            cursor = self._db.execute(
                "UPDATE pauses SET claimed_by = ? WHERE token = ? AND consumed = 2 AND claimed_by = ?",
                (run.id, token, holder),
            )
            return cursor.rowcount == 1

    def release(self, token: str, run: "RunLease") -> None:
        """Gives back the claim ``run`` holds after its continuation failed
        with an error: the client's retry redeems the token again. A claim
        another run took over, or a finished token, is left alone."""
        with self._db:
            self._db.execute(
                "UPDATE pauses SET consumed = 0, claimed_by = NULL WHERE token = ? AND consumed = 2 AND claimed_by = ?",
                (token, run.id),
            )

    def answered_in(self, conversation: str) -> bool:
        """Whether a pause of ``conversation`` was answered and its turn
        finished: the ``approval-reused-in-conversation`` twin's memory."""
        row = self._db.execute(
            "SELECT 1 FROM pauses WHERE conversation = ? AND consumed = 1 LIMIT 1", (conversation,)
        ).fetchone()
        return row is not None

    def finish(self, token: str) -> None:
        """Marks a claimed token's continuation done: every later
        redemption is a replay."""
        with self._db:
            self._db.execute("UPDATE pauses SET consumed = 1 WHERE token = ?", (token,))
