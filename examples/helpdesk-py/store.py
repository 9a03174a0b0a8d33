"""The help desk's durable store: one SQLite file in the trial's durable dir.

Everything a restart must not lose lives here: demonstration episodes, the
procedures promoted from them and their review status, pauses with their
single-use tokens and checkpoints, and the refunds actually issued.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass
from typing import Any, List, Optional

_SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (id INTEGER PRIMARY KEY, lesson TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS procedures (
    id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE, status TEXT NOT NULL,
    action_tool TEXT NOT NULL DEFAULT '', precondition TEXT NOT NULL DEFAULT 'null');
CREATE TABLE IF NOT EXISTS pauses (
    token TEXT PRIMARY KEY, conversation TEXT NOT NULL, interaction TEXT NOT NULL,
    checkpoint TEXT NOT NULL, consumed INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS refunds (ord INTEGER PRIMARY KEY);
"""


@dataclass(frozen=True)
class Procedure:
    """One learned procedure as the review door shows it."""

    id: int
    text: str
    status: str
    action_tool: str
    precondition: Any

    def identity(self) -> str:
        """A digest of what the procedure says, so two reads can be compared
        without either quoting it."""
        digest = hashlib.sha256()
        for part in (self.action_tool, json.dumps(self.precondition, sort_keys=True), self.text):
            data = part.encode("utf-8")
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
        return digest.hexdigest()[:16]


@dataclass(frozen=True)
class PauseRow:
    """A pause as stored: whom it asked, where to continue, whether spent."""

    conversation: str
    interaction: str
    checkpoint: Any
    consumed: bool


class Store:
    """Thin, explicit SQL over one connection."""

    def __init__(self, durable_dir: str) -> None:
        self._db = sqlite3.connect(os.path.join(durable_dir, "helpdesk.sqlite3"))
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        """Closes the connection (every write is already committed)."""
        self._db.close()

    def record_episode(self, lesson: str) -> None:
        """Keeps one demonstration for the consolidation cycle."""
        with self._db:
            self._db.execute("INSERT INTO episodes (lesson) VALUES (?)", (lesson,))

    def consolidate(self, minimum: int = 2) -> int:
        """Promotes every lesson seen ``minimum`` times into a draft procedure;
        returns how many this cycle promoted."""
        with self._db:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO procedures (text, status) "
                "SELECT lesson, 'draft' FROM episodes GROUP BY lesson HAVING COUNT(*) >= ?",
                (minimum,),
            )
            return max(cursor.rowcount, 0)

    def procedures(self) -> List[Procedure]:
        """Every procedure, oldest first (the review door's listing)."""
        rows = self._db.execute(
            "SELECT id, text, status, action_tool, precondition FROM procedures ORDER BY id"
        )
        return [Procedure(r[0], r[1], r[2], r[3], json.loads(r[4])) for r in rows]

    def approve(self, procedure_id: int, tool: str, precondition: Any) -> None:
        """Marks a draft approved, naming the tool it governs and its precondition."""
        with self._db:
            self._db.execute(
                "UPDATE procedures SET status = 'approved', action_tool = ?, precondition = ? "
                "WHERE id = ?",
                (tool, json.dumps(precondition), procedure_id),
            )

    def record_refund(self, order: int) -> None:
        """Remembers a refund the ledger admitted."""
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO refunds (ord) VALUES (?)", (order,))

    def save_pause(self, token: str, conversation: str, interaction: str, checkpoint: Any) -> None:
        """Stores a pause and the checkpoint its redemption continues from."""
        with self._db:
            self._db.execute(
                "INSERT INTO pauses (token, conversation, interaction, checkpoint) "
                "VALUES (?, ?, ?, ?)",
                (token, conversation, interaction, json.dumps(checkpoint)),
            )

    def pause(self, token: str) -> Optional[PauseRow]:
        """The pause a token was issued for, if any."""
        row = self._db.execute(
            "SELECT conversation, interaction, checkpoint, consumed FROM pauses WHERE token = ?",
            (token,),
        ).fetchone()
        if row is None:
            return None
        return PauseRow(row[0], row[1], json.loads(row[2]), bool(row[3]))

    def consume(self, token: str) -> bool:
        """Spends a token; ``False`` when it was already spent. Atomic, so two
        redemptions racing on one token cannot both win."""
        with self._db:
            cursor = self._db.execute(
                "UPDATE pauses SET consumed = 1 WHERE token = ? AND consumed = 0", (token,)
            )
            return cursor.rowcount == 1
