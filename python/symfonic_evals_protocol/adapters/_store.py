"""The adapters' durable tables, in one SQLite file under the trial's
durable directory: pauses and their tokens (:class:`PauseTable`, the
token's format a :class:`~.tokens.TokenCodec`'s), each conversation's
latest prompt turn (:class:`TurnJournal`) and reported call ids
(:class:`CallIds`). Every write commits before the method returns, so a
process killed right after finds it on restart."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional

from .._records import ResumeRequest
from ._lease import RunLease
from ._refusals import foreign_token, question_mismatch, replayed, unknown_token
from .tokens import TokenCodec

ADAPTER_STORE_FILE = "symfonic-adapter.sqlite3"
"""The adapter store's file name in the durable directory."""

__all__ = [
    "ADAPTER_STORE_FILE",
    "AdapterStore",
    "Begun",
    "CallIds",
    "PauseRow",
    "PauseTable",
    "TurnJournal",
]

# -- the durable store -----------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pauses (
    token TEXT PRIMARY KEY,
    conversation TEXT NOT NULL,
    question_id TEXT NOT NULL,
    interaction TEXT NOT NULL,
    calls TEXT NOT NULL,
    handle TEXT NOT NULL,
    baseline TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    claimed_by TEXT);
CREATE INDEX IF NOT EXISTS pauses_by_question ON pauses (conversation, question_id);
CREATE TABLE IF NOT EXISTS turns (
    conversation TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    baseline TEXT NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0,
    claimed_by TEXT);
CREATE TABLE IF NOT EXISTS call_ids (
    conversation TEXT NOT NULL,
    scope TEXT NOT NULL,
    framework_id TEXT NOT NULL,
    reported TEXT NOT NULL UNIQUE,
    PRIMARY KEY (conversation, scope, framework_id));
"""


class _Db:
    """One connection shared by the tables, safe across threads."""

    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, check_same_thread=False, timeout=30.0)
        self.lock = threading.RLock()
        with self.lock:
            self.conn.executescript(_SCHEMA)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            with self.conn:
                yield self.conn


@dataclass(frozen=True)
class PauseRow:
    """A pause as stored.

    ``calls`` are the calls it parked (the adapter's own shape, e.g.
    ``{"id": reported id, "name": tool, "framework_id": ...}``);
    ``handle`` is what the framework needs to continue (LangGraph: the
    interrupt id and checkpoint id); ``baseline`` what the conversation's
    state was before the turn that paused began. ``status`` is ``open``,
    ``claimed`` (a redemption is under way, by ``claimed_by``) or
    ``finished`` (spent for good)."""

    token: str
    conversation: str
    question_id: str
    interaction: str
    calls: List[Dict[str, Any]]
    handle: Any
    baseline: Any
    status: str
    claimed_by: Optional[str]

    @property
    def finished(self) -> bool:
        """Whether the pause was redeemed and its continuation finished."""
        return self.status == "finished"


class PauseTable:
    """Pauses: minted by the adapter, bound to a conversation and a
    question id, spent once. Each is stored under a key of 32 url-safe
    random bytes (``PauseRow.token``, which :meth:`claim`, :meth:`release`
    and :meth:`finish` take); the token handed out is ``codec``'s for that
    key (:class:`~symfonic_evals_protocol.adapters.tokens.TokenCodec`; by
    default the key itself)."""

    _COLUMNS = "token, conversation, question_id, interaction, calls, handle, baseline, status, claimed_by"

    def __init__(self, db: _Db, codec: Optional[TokenCodec] = None) -> None:
        self._db = db
        self.codec = codec or TokenCodec()

    @staticmethod
    def _row(row: Any) -> Optional[PauseRow]:
        if row is None:
            return None
        return PauseRow(
            row[0], row[1], row[2], row[3], json.loads(row[4]), json.loads(row[5]), json.loads(row[6]), row[7], row[8]
        )

    def mint(
        self,
        conversation: str,
        question_id: str,
        interaction: str,
        calls: List[Dict[str, Any]],
        handle: Any,
        baseline: Any = None,
    ) -> str:
        """Stores a new open pause and returns its token (the codec's for
        the pause's key). An open pause of the same conversation and
        question id (one minted by an attempt that died before answering)
        is handed out again instead."""
        with self._db.transaction() as conn:
            row = conn.execute(
                f"SELECT {self._COLUMNS} FROM pauses WHERE conversation = ? AND question_id = ? "
                "AND status = 'open' ORDER BY rowid DESC LIMIT 1",
                (conversation, question_id),
            ).fetchone()
            if row is not None:
                return self.codec.issue(str(row[0]), conversation, question_id)
            token = secrets.token_urlsafe(32)
            conn.execute(
                "INSERT INTO pauses (token, conversation, question_id, interaction, calls, handle, baseline) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    token,
                    conversation,
                    question_id,
                    interaction,
                    json.dumps(calls),
                    json.dumps(handle),
                    json.dumps(baseline),
                ),
            )
        return self.codec.issue(token, conversation, question_id)

    def get(self, token: str) -> Optional[PauseRow]:
        """The pause ``token`` names (a token the codec issued), if any."""
        try:
            key = self.codec.verify(token)
        except Exception:  # a token the codec cannot read names no pause
            key = None
        if not isinstance(key, str):
            return None
        with self._db.transaction() as conn:
            return self._row(conn.execute(f"SELECT {self._COLUMNS} FROM pauses WHERE token = ?", (key,)).fetchone())

    def lookup(self, request: ResumeRequest) -> PauseRow:
        """The pause a resume redeems; raises :func:`unknown_token`,
        :func:`foreign_token` or :func:`question_mismatch`."""
        pause = self.get(request.token) if isinstance(request.token, str) else None
        if pause is None:
            raise unknown_token()
        if pause.conversation != request.conversation:
            raise foreign_token()
        if request.question_id != pause.question_id:
            raise question_mismatch()
        return pause

    def refuse_replay(self, pause: PauseRow, run: RunLease) -> None:
        """Raises :func:`replayed` when redeeming ``pause`` now is a replay:
        its continuation finished, or a live run (this one included) holds
        it. A claim left by a dead run is a client's retry and passes."""
        if pause.finished:
            raise replayed()
        if pause.claimed_by is not None and run.is_alive(pause.claimed_by):
            raise replayed()

    def claim(self, token: str, run: RunLease) -> bool:
        """Claims an open pause for the continuation ``run`` is about to
        carry: ``True`` for exactly one of any number of concurrent callers.
        A claim is taken over only from a run that no longer holds its
        lease, never from a live one and never once the pause finished."""
        with self._db.transaction() as conn:
            cursor = conn.execute(
                "UPDATE pauses SET status = 'claimed', claimed_by = ? WHERE token = ? AND status = 'open'",
                (run.id, token),
            )
            if cursor.rowcount == 1:
                return True
            row = conn.execute("SELECT claimed_by FROM pauses WHERE token = ? AND status = 'claimed'", (token,)).fetchone()
            holder = None if row is None else row[0]
            if holder is None or run.is_alive(holder):
                return False
            cursor = conn.execute(
                "UPDATE pauses SET claimed_by = ? WHERE token = ? AND status = 'claimed' AND claimed_by = ?",
                (run.id, token, holder),
            )
            return cursor.rowcount == 1

    def release(self, token: str, run: RunLease) -> None:
        """Gives back ``run``'s claim after its continuation failed with an
        error, so the client's retry redeems the token again."""
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE pauses SET status = 'open', claimed_by = NULL "
                "WHERE token = ? AND status = 'claimed' AND claimed_by = ?",
                (token, run.id),
            )

    def finish(self, token: str) -> None:
        """Spends the pause under the key ``token`` for good: every later
        redemption is a replay. The codec hears of it once."""
        with self._db.transaction() as conn:
            cursor = conn.execute(
                "UPDATE pauses SET status = 'finished' WHERE token = ? AND status != 'finished'", (token,)
            )
        if cursor.rowcount == 1:
            self.codec.spend(token)


@dataclass(frozen=True)
class Begun:
    """How a prompt turn starts: ``retry`` when it continues an earlier
    attempt of the same request that never finished, and the ``baseline``
    recorded before that request's first attempt."""

    retry: bool
    baseline: Any


class TurnJournal:
    """The latest prompt turn of each conversation and whether it finished,
    so a client's retry of a request whose process died (or whose turn
    raised) continues from the framework's checkpoint instead of starting
    the request again."""

    def __init__(self, db: _Db) -> None:
        self._db = db

    def begin(self, conversation: str, digest: str, run: RunLease, baseline: Callable[[], Any]) -> Begun:
        """Starts a prompt turn. It is a retry when the conversation's
        latest turn is the same request (``digest``, see
        :func:`request_digest`), unfinished, and not held by another live
        run; then the stored baseline is returned and the turn is claimed
        for ``run``. Otherwise ``baseline()`` is recorded for a new turn."""
        with self._db.transaction() as conn:
            row = conn.execute(
                "SELECT digest, baseline, finished, claimed_by FROM turns WHERE conversation = ?", (conversation,)
            ).fetchone()
            if row is not None and row[0] == digest and not row[2]:
                holder = row[3]
                if holder is None or holder == run.id or not run.is_alive(holder):
                    conn.execute("UPDATE turns SET claimed_by = ? WHERE conversation = ?", (run.id, conversation))
                    return Begun(True, json.loads(row[1]))
        value = baseline()
        with self._db.transaction() as conn:
            conn.execute(
                "INSERT INTO turns (conversation, digest, baseline, finished, claimed_by) VALUES (?, ?, ?, 0, ?) "
                "ON CONFLICT(conversation) DO UPDATE SET digest = excluded.digest, baseline = excluded.baseline, "
                "finished = 0, claimed_by = excluded.claimed_by",
                (conversation, digest, json.dumps(value), run.id),
            )
        return Begun(False, value)

    def finish(self, conversation: str, run: RunLease) -> None:
        """The turn answered with a record: the same request sent again is a
        new request."""
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE turns SET finished = 1, claimed_by = NULL WHERE conversation = ? AND claimed_by = ?",
                (conversation, run.id),
            )

    def release(self, conversation: str, run: RunLease) -> None:
        """The turn raised: the same request sent again continues it."""
        with self._db.transaction() as conn:
            conn.execute(
                "UPDATE turns SET claimed_by = NULL WHERE conversation = ? AND claimed_by = ?", (conversation, run.id)
            )


class CallIds:
    """Reported call ids that never repeat within a trial.

    Frameworks reuse the model's tool-call ids, and a replayed model answers
    the same request with the same id (``call_1`` in two conversations);
    the packs require ids unique across the trial. The first call to claim
    an id reports it as it is; a later one with the same id in another
    conversation or scope reports ``<id>~<n>``. The same call (conversation,
    scope, framework id) always gets the same reported id, across restarts.
    """

    def __init__(self, db: _Db) -> None:
        self._db = db

    def report_id(self, conversation: str, scope: str, framework_id: str) -> str:
        """The id to report for the framework's call ``framework_id`` made in
        ``scope`` (e.g. the id of the model message that made it)."""
        key = (conversation, scope, framework_id)
        with self._db.transaction() as conn:
            row = conn.execute(
                "SELECT reported FROM call_ids WHERE conversation = ? AND scope = ? AND framework_id = ?", key
            ).fetchone()
            if row is not None:
                return str(row[0])
            candidate, n = framework_id or "call", 1
            while conn.execute("SELECT 1 FROM call_ids WHERE reported = ?", (candidate,)).fetchone() is not None:
                n += 1
                candidate = f"{framework_id or 'call'}~{n}"
            conn.execute(
                "INSERT INTO call_ids (conversation, scope, framework_id, reported) VALUES (?, ?, ?, ?)",
                (*key, candidate),
            )
            return candidate


class AdapterStore:
    """The adapter's durable tables in one SQLite file under the durable
    directory: :attr:`pauses` (tokens by ``codec``), :attr:`turns`,
    :attr:`calls`."""

    def __init__(
        self, durable_dir: str, filename: str = ADAPTER_STORE_FILE, codec: Optional[TokenCodec] = None
    ) -> None:
        self._db = _Db(os.path.join(durable_dir, filename))
        self.pauses = PauseTable(self._db, codec)
        self.turns = TurnJournal(self._db)
        self.calls = CallIds(self._db)

    def close(self) -> None:
        """Closes the connection."""
        with self._db.lock:
            self._db.conn.close()
