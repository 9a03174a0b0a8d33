"""What an adapter for a framework without checkpoints between the steps of
a run keeps beside the shared adapter store (:mod:`._common`: pause tokens,
retry detection, call ids): one more SQLite file in the trial's durable
directory. Standard library only, so it imports (and is tested) without
any framework. The OpenAI Agents SDK and Pydantic AI adapters use it.

- **journal**: the model responses of each attempt at a request, in order.
  The framework keeps no checkpoint between the steps of a run, so a
  client's retry after a crash replays these instead of asking the model
  again: the run continues with the decisions it had made (the tools run
  again, and their ledger keys come back as duplicates) rather than
  starting over.
- **prompts**: a serial number per prompt turn of a conversation, so a
  pause knows whether its conversation moved on (a newer prompt) since.
- **histories**: a conversation's message history as the framework
  serializes it, for a framework that hands the history to each run.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from typing import Optional

JOURNAL_FILE = "openai-agents-journal.sqlite3"
"""The OpenAI Agents SDK adapter's file name in the durable directory
(others name their own)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    attempt TEXT NOT NULL, seq INTEGER NOT NULL, response TEXT NOT NULL,
    PRIMARY KEY (attempt, seq));
CREATE TABLE IF NOT EXISTS prompts (conversation TEXT PRIMARY KEY, serial INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS histories (conversation TEXT PRIMARY KEY, history TEXT NOT NULL);
"""


class RunJournal:
    """The journal, the prompt serials and the histories; every write
    commits at once."""

    def __init__(self, durable_dir: str, filename: str = JOURNAL_FILE) -> None:
        self._db = sqlite3.connect(os.path.join(durable_dir, filename), timeout=30.0, check_same_thread=False)
        self._lock = threading.RLock()
        with self._lock, self._db:
            self._db.executescript(_SCHEMA)

    def close(self) -> None:
        """Closes the connection."""
        with self._lock:
            self._db.close()

    # -- model responses by attempt ------------------------------------------

    def response(self, attempt: str, seq: int) -> Optional[str]:
        """The ``seq``-th model response kept for ``attempt``, if any."""
        with self._lock:
            row = self._db.execute(
                "SELECT response FROM journal WHERE attempt = ? AND seq = ?", (attempt, seq)
            ).fetchone()
        return None if row is None else str(row[0])

    def keep(self, attempt: str, seq: int, response: str) -> None:
        """Keeps the ``seq``-th model response of ``attempt``."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO journal (attempt, seq, response) VALUES (?, ?, ?)", (attempt, seq, response)
            )

    def forget(self, attempt: str) -> None:
        """Drops what ``attempt`` kept: a new attempt at the same request
        (not a retry) asks the model afresh."""
        with self._lock, self._db:
            self._db.execute("DELETE FROM journal WHERE attempt = ?", (attempt,))

    # -- prompt serials ----------------------------------------------------------

    def next_serial(self, name: str) -> int:
        """A number no earlier caller of this trial drew under ``name``,
        across restarts."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO counters (name, value) VALUES (?, 1) ON CONFLICT(name) DO UPDATE SET value = value + 1",
                (name,),
            )
            return int(self._db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()[0])

    def prompt_started(self, conversation: str, serial: int) -> None:
        """Records that the conversation's latest prompt turn is ``serial``."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO prompts (conversation, serial) VALUES (?, ?) "
                "ON CONFLICT(conversation) DO UPDATE SET serial = excluded.serial",
                (conversation, serial),
            )

    def latest_prompt(self, conversation: str) -> int:
        """The serial of the conversation's latest prompt turn (0: none)."""
        with self._lock:
            row = self._db.execute("SELECT serial FROM prompts WHERE conversation = ?", (conversation,)).fetchone()
        return 0 if row is None else int(row[0])

    # -- conversation histories ----------------------------------------------------

    def history(self, conversation: str) -> Optional[str]:
        """The conversation's history as last kept, if any."""
        with self._lock:
            row = self._db.execute("SELECT history FROM histories WHERE conversation = ?", (conversation,)).fetchone()
        return None if row is None else str(row[0])

    def keep_history(self, conversation: str, history: str) -> None:
        """Keeps the conversation's history (replacing the one before)."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO histories (conversation, history) VALUES (?, ?) "
                "ON CONFLICT(conversation) DO UPDATE SET history = excluded.history",
                (conversation, history),
            )
