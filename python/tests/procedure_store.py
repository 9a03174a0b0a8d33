"""The adopter's procedure store the procedural test desks share (one per
framework): drafts learned from ``remember:`` turns, approved, amended,
rejected or revoked through the structured review door, read by each
desk's gate. A SQLite table under the durable directory, so a restart
keeps it; nothing in it depends on a framework."""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any, Dict, List, Optional

from symfonic_evals_protocol import TurnFailure, procedure_identity


class Procedures:
    """The adopter's procedure store: drafts learned from ``remember:``
    turns, approved or rejected by the operator, read by the gate."""

    def __init__(self, durable_dir: str) -> None:
        self.db = sqlite3.connect(os.path.join(durable_dir, "procedures.sqlite3"), check_same_thread=False)
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS procedures (id INTEGER PRIMARY KEY, text TEXT UNIQUE, status TEXT,"
            " tool TEXT DEFAULT '', name TEXT DEFAULT '', precondition TEXT DEFAULT '[]')"
        )
        self.db.commit()

    def rows(self, status: Optional[str] = None) -> List[Dict[str, Any]]:
        found = self.db.execute("SELECT text, status, tool, name, precondition FROM procedures ORDER BY id").fetchall()
        rows = [dict(zip(("text", "status", "tool", "name", "precondition"), row)) for row in found]
        for row in rows:
            row["precondition"] = json.loads(row["precondition"])
        return [row for row in rows if status in (None, row["status"])]

    def draft(self, text: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO procedures (text, status) VALUES (?, 'draft')", (text,))
        self.db.commit()

    def review(self, request: Any) -> None:
        """The structured review door's decision, on this table."""
        predicates = json.dumps([{"state": p} for p in request.precondition or []])
        with self.db:  # commits, or rolls back a decision that raised
            self._review(request, predicates)

    def _review(self, request: Any, predicates: str) -> None:
        if request.action in ("approve", "reject"):
            drafts = [r for r in self.rows("draft") if (request.draft or "") in r["text"]]
            if len(drafts) != 1:
                raise TurnFailure("NoSuchDraft", f"{len(drafts)} drafts match; exactly one is needed")
            status = "approved" if request.action == "approve" else "rejected"
            self.db.execute(
                "UPDATE procedures SET status = ?, tool = ?, name = ?, precondition = ? WHERE text = ?",
                (status, request.tool or "", request.procedure, predicates, drafts[0]["text"]),
            )
        else:
            update = ("precondition = ?", predicates) if request.action == "amend" else ("status = ?", "revoked")
            done = self.db.execute(
                f"UPDATE procedures SET {update[0]} WHERE name = ? AND status = 'approved'",
                (update[1], request.procedure),
            )
            if done.rowcount != 1:
                raise TurnFailure("NoSuchProcedure", "no approved procedure has that name")

    def operator(self, request: Any) -> str:
        """An operator's words: ``list`` answers the drafts' count."""
        return f"{len(self.rows('draft'))} draft(s)"

    def evidence(self, request: Any) -> Dict[str, Any]:
        """The review door's listing, as the procedural pack reads it."""
        approved = self.rows("approved")
        return {
            "procedural_review": sorted([r["status"], r["tool"]] for r in self.rows()),
            "procedural_review_procedures": [{k: r[k] for k in ("tool", "precondition", "text")} for r in approved],
            "procedural_review_ids": sorted(identity(r) for r in approved),
        }


def identity(row: Dict[str, Any]) -> str:
    """The procedure's identity, as the procedural pack computes it."""
    return procedure_identity(row["tool"], row["precondition"], row["text"])
