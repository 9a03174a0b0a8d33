"""What every framework adapter needs beside the framework: durable pause
tokens, telling a client's retry from a new prompt, call ids that never
repeat, the ledger reachable from a tool body, and the typed refusals the
packs expect. Standard library only, Python 3.9 or newer.

An adapter (``adapters/langgraph.py`` is one) builds on these pieces:

``AdapterStore(durable_dir)``
    One SQLite file under the trial's durable directory holding
    :class:`PauseTable` (``store.pauses``), :class:`TurnJournal`
    (``store.turns``) and :class:`CallIds` (``store.calls``). Every write
    commits before the method returns, so a process killed right after
    finds it on restart.

``RunLease(durable_dir)``
    This start of the process, alive while it runs (an ``flock``'d file the
    operating system releases when the process dies). Claims name a run, so
    a claim left by a dead run is a client's retry and is honoured, while a
    claim held by a live run is a concurrent or repeated redemption and is
    refused.

The redemption of a pause, in the order an adapter runs it, every refusal
before the framework is touched::

    pause = store.pauses.lookup(request)           # unknown / foreign / question id
    store.pauses.refuse_replay(pause, run)         # spent, or claimed by a live run
    require_approval(request.answer)               # the adopter's answer check, before spending
    ... the framework's own staleness check ...    # e.g. the interrupt is still pending
    if not store.pauses.claim(pause.token, run):   # atomic; takes over a dead run's claim
        raise replayed()
    try:
        record = continue_the_framework(...)
    except Exception:
        store.pauses.release(pause.token, run)     # the client's retry may carry it on
        raise
    store.pauses.finish(pause.token)               # spent for good only now

A prompt turn::

    begun = store.turns.begin(conversation, request_digest(request), run, baseline_fn)
    # begun.retry: the same request's earlier attempt never finished (the
    # process died, or the turn raised): continue from the framework's
    # checkpoint instead of starting again; begun.baseline: what the
    # framework's state was before the first attempt.
    ...
    store.turns.finish(conversation, run)          # or release(...) on an exception

Tool bodies reach the harness's ledger through :data:`effects`, which the
adapter binds to the running turn with :func:`bound_turn`.

The refusals (:func:`unknown_token`, :func:`foreign_token`,
:func:`question_mismatch`, :func:`replayed`, :func:`stale`,
:func:`invalid_answer`) carry the kinds and codes the reference desk
(``examples/helpdesk-py``) answers with, plus ``StalePauseToken`` /
``pause.stale`` for a token whose pause the framework no longer holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import hashlib
import inspect
import json
import os
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

from .._async import AsyncTurn
from .._identity import canonical_json
from .._records import PromptRequest, ResumeRequest, TurnFailure
from .._sync import Turn
from .tokens import TokenCodec

__all__ = [
    "ADAPTER_STORE_FILE",
    "AdapterStore",
    "Begun",
    "CallIds",
    "Effects",
    "PauseRow",
    "PauseTable",
    "RunLease",
    "TurnJournal",
    "bound_turn",
    "effects",
    "foreign_token",
    "invalid_answer",
    "json_safe",
    "question_mismatch",
    "replayed",
    "request_digest",
    "require_approval",
    "stale",
    "unknown_token",
]

ADAPTER_STORE_FILE = "symfonic-adapter.sqlite3"
"""The adapter store's file name in the durable directory."""


# -- refusals ------------------------------------------------------------------


def unknown_token() -> TurnFailure:
    """No pause was issued with the token presented (a forgery, a typo)."""
    return TurnFailure("UnknownPauseToken", "no pause was issued with this token", code="pause.unknown")


def foreign_token() -> TurnFailure:
    """The token belongs to a pause of another conversation."""
    return TurnFailure("ForeignPauseToken", "this pause belongs to another conversation", code="pause.foreign")


def question_mismatch() -> TurnFailure:
    """The question id handed back is not the one the pause published."""
    return TurnFailure("QuestionMismatch", "the answer addresses another question", code="question.mismatch")


def replayed() -> TurnFailure:
    """The pause was already redeemed (or is being redeemed right now)."""
    return TurnFailure("PauseTokenReplayedError", "this pause was already redeemed", code="pause.replayed")


def stale() -> TurnFailure:
    """The framework no longer holds the pause the token was issued for: the
    conversation moved on (a new prompt) or the checkpoint is gone."""
    return TurnFailure("StalePauseToken", "the conversation no longer waits on this pause", code="pause.stale")


def invalid_answer(message: str = "the answer says only whether it is approved") -> TurnFailure:
    """The answer does not fit the question; the token stays redeemable."""
    return TurnFailure("InvalidAnswer", message, code="answer.invalid")


def require_approval(answer: Any) -> None:
    """The strict approval check: exactly ``{"approved": true|false}``, no
    look-alikes (``"true"``, ``1``, ``"yes"``). Raises :func:`invalid_answer`."""
    if not (isinstance(answer, dict) and set(answer) == {"approved"} and isinstance(answer["approved"], bool)):
        raise invalid_answer()


# -- values ------------------------------------------------------------------


def json_safe(value: Any) -> Any:
    """``value`` as JSON the protocol can carry: objects with a
    ``model_dump`` (pydantic) or ``dict`` method are dumped, anything else
    unknown becomes its ``str``."""

    def default(thing: Any) -> Any:
        for method in ("model_dump", "dict"):
            dump = getattr(thing, method, None)
            if callable(dump):
                try:
                    return dump()
                except TypeError:
                    continue
        return str(thing)

    return json.loads(json.dumps(value, default=default, ensure_ascii=False, allow_nan=False))


def request_digest(request: Union[PromptRequest, ResumeRequest]) -> str:
    """A digest naming a request by everything it says, so the same request
    sent again (a client's retry) has the same digest and a different one
    does not."""
    if isinstance(request, PromptRequest):
        body: Dict[str, Any] = {
            "kind": "prompt",
            "conversation": request.conversation,
            "prompt": request.prompt,
            "state": request.state,
            "role": request.role,
        }
    else:
        body = {
            "kind": "resume",
            "conversation": request.conversation,
            "token": request.token,
            "answer": request.answer,
            "question_id": request.question_id,
        }
    return hashlib.sha256(canonical_json(json_safe(body)).encode("utf-8")).hexdigest()


# -- this start of the process -------------------------------------------------


class RunLease:
    """This start of the deployment, alive while the process is.

    The run holds an exclusive ``flock`` on its own file under
    ``runs/`` in the durable directory; the operating system drops it when
    the process dies, so "the claimant's lock can be taken" means "the
    claimant is gone", with no clock and no timeout. Where ``fcntl`` is
    missing (Windows), every other run counts as gone.
    """

    def __init__(self, durable_dir: str) -> None:
        self._dir = os.path.join(durable_dir, "runs")
        os.makedirs(self._dir, exist_ok=True)
        self.id = secrets.token_hex(8)
        self._held = open(os.path.join(self._dir, f"{self.id}.lock"), "w")
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not Unix
            self._fcntl = None
        else:
            self._fcntl = fcntl
            fcntl.flock(self._held, fcntl.LOCK_EX)

    def is_alive(self, run: str) -> bool:
        """Whether the run named ``run`` still holds its lease. This run is
        alive; a run with no lease file is gone; an unreadable one counts as
        alive (refusing a retry is safe, admitting a concurrent redemption
        is not)."""
        if run == self.id:
            return not self._held.closed
        if self._fcntl is None:  # pragma: no cover - not Unix
            return False
        try:
            probe = open(os.path.join(self._dir, f"{run}.lock"))
        except FileNotFoundError:
            return False
        except OSError:
            return True
        with probe:
            try:
                self._fcntl.flock(probe, self._fcntl.LOCK_EX | self._fcntl.LOCK_NB)
            except OSError:
                return True
            self._fcntl.flock(probe, self._fcntl.LOCK_UN)
            return False

    def close(self) -> None:
        """Gives the lease up (the run counts as gone from now on)."""
        self._held.close()


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


# -- the ledger from a tool body -----------------------------------------------

_CURRENT: "contextvars.ContextVar[Optional[_Bound]]" = contextvars.ContextVar("symfonic_evals_turn", default=None)


@dataclass
class _Bound:
    turn: Union[Turn, AsyncTurn]
    request: Union[PromptRequest, ResumeRequest]
    lock: threading.Lock
    loop: Optional[asyncio.AbstractEventLoop] = None
    """The event loop an asynchronous turn runs on, when the adapter lets
    blocking tool bodies on worker threads reach it (see :func:`bound_turn`)."""

    def on_loop(self, make: Callable[[], Any]) -> Any:
        """Runs the coroutine ``make()`` builds on the turn's loop from a
        worker thread and waits for it; ``TypeError`` where that cannot be
        (no loop was bound, or this thread runs the loop: await instead)."""
        if self.loop is None:
            raise TypeError("this turn is asynchronous: await the *_async method")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            raise TypeError("this turn is asynchronous and runs on this thread: await the *_async method")
        return asyncio.run_coroutine_threadsafe(make(), self.loop).result()


_LATEST: List[Optional[_Bound]] = [None]
"""The turn bound last in this process: the fallback for a tool body run on
a thread that did not inherit the adapter's context."""


@contextlib.contextmanager
def bound_turn(
    turn: Union[Turn, AsyncTurn],
    request: Union[PromptRequest, ResumeRequest],
    loop: Optional[asyncio.AbstractEventLoop] = None,
) -> Iterator[None]:
    """Binds :data:`effects` to ``turn`` while the block runs (the adapter
    wraps each framework run in it). Frameworks copy the context into the
    threads and tasks they run tools on; where one does not, the turn bound
    last in the process is used (the harness runs one turn at a time).

    ``loop``, for an :class:`AsyncTurn`, is the event loop it runs on: the
    blocking :meth:`Effects.apply` and :meth:`Effects.witness` then work
    from a worker thread (a framework running a plain ``def`` tool in
    ``asyncio.to_thread``) by handing the round trip to that loop. Without
    it they raise ``TypeError`` on an asynchronous turn, as before."""
    bound = _Bound(turn, request, threading.Lock(), loop)
    token = _CURRENT.set(bound)
    previous, _LATEST[0] = _LATEST[0], bound
    try:
        yield
    finally:
        _CURRENT.reset(token)
        _LATEST[0] = previous


class Effects:
    """The harness's ledger and witness, from inside a tool body.

    A tool performs an effect exactly once by asking the ledger first, under
    a key that names the request (never the attempt: a retry after a crash
    must ask under the same key)::

        @tool
        def escalate_ticket(ticket: int) -> dict:
            if effects.apply(f"escalate:{ticket}", tool="escalate_ticket"):
                ...  # perform it
            return {"escalated": ticket}

    ``apply`` returns ``True`` when the key is new (perform the effect now)
    and ``False`` when it was applied before. Outside a turn the adapter
    runs, it raises ``RuntimeError``. Concurrent tool bodies of one turn
    take turns on the channel. Under an asyncio adapter, ``await
    effects.apply_async(...)``.
    """

    control_flow: Tuple[type, ...] = ()
    """Exception types a framework raises through a tool body to steer the
    run (LangGraph's interrupt); :meth:`witnessed` lets them pass without
    witnessing an error. Adapters add theirs with :meth:`pass_through`."""

    def pass_through(self, *types: type) -> None:
        """Declares exception types that are the framework's control flow,
        not a tool's failure."""
        self.control_flow = tuple(dict.fromkeys((*self.control_flow, *types)))

    def _bound(self) -> _Bound:
        bound = _CURRENT.get() or _LATEST[0]
        if bound is None:
            raise RuntimeError("no turn is running: effects apply only inside a turn an adapter runs")
        return bound

    @property
    def request(self) -> Union[PromptRequest, ResumeRequest]:
        """The request the running turn answers (a prompt's ``state`` is on it)."""
        return self._bound().request

    def apply(self, key: str, tool: Optional[str] = None) -> bool:
        """Records an effect under ``key`` (of ``tool``'s call, when named);
        ``True``: perform it now, ``False``: it was applied before."""
        bound = self._bound()
        if isinstance(bound.turn, AsyncTurn):
            if bound.loop is None:
                raise TypeError("this turn is asynchronous: await effects.apply_async(...)")
            turn = bound.turn
            return bool(bound.on_loop(lambda: turn.ledger_apply(key, tool=tool)))
        with bound.lock:
            return bound.turn.ledger_apply(key, tool=tool)

    async def apply_async(self, key: str, tool: Optional[str] = None) -> bool:
        """:meth:`apply` for a coroutine tool body."""
        bound = self._bound()
        if isinstance(bound.turn, AsyncTurn):
            return await bound.turn.ledger_apply(key, tool=tool)
        with bound.lock:
            return bound.turn.ledger_apply(key, tool=tool)

    def witness(self, tool: str, arguments: Any, **outcome: Any) -> None:
        """Records what the body of ``tool`` received and how it ended:
        ``result=`` or ``error=`` (text)."""
        bound = self._bound()
        safe = {k: json_safe(v) for k, v in outcome.items()}
        if isinstance(bound.turn, AsyncTurn):
            if bound.loop is None:
                raise TypeError("this turn is asynchronous: await effects.witness_async(...)")
            turn = bound.turn
            bound.on_loop(lambda: turn.witness(tool, json_safe(arguments), **safe))
            return
        with bound.lock:
            bound.turn.witness(tool, json_safe(arguments), **safe)

    async def witness_async(self, tool: str, arguments: Any, **outcome: Any) -> None:
        """:meth:`witness` for a coroutine tool body."""
        bound = self._bound()
        safe = {k: json_safe(v) for k, v in outcome.items()}
        if isinstance(bound.turn, AsyncTurn):
            await bound.turn.witness(tool, json_safe(arguments), **safe)
        else:
            with bound.lock:
                bound.turn.witness(tool, json_safe(arguments), **safe)

    def witnessed(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """Decorates a tool body so every execution witnesses its arguments
        (those that are JSON) and its result, or its error as text (then
        re-raised). Put it under the framework's decorator (``@tool`` on
        top): the signature and docstring are kept. Outside a turn the body
        runs unwitnessed."""
        signature = inspect.signature(function)
        name = function.__name__

        def arguments_of(args: Any, kwargs: Any) -> Dict[str, Any]:
            bound = signature.bind_partial(*args, **kwargs)
            shown: Dict[str, Any] = {}
            for key, value in bound.arguments.items():
                try:
                    json.dumps(value)
                except (TypeError, ValueError):
                    continue
                shown[key] = value
            return shown

        def active() -> bool:
            return (_CURRENT.get() or _LATEST[0]) is not None

        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                if not active():
                    return await function(*args, **kwargs)
                arguments = arguments_of(args, kwargs)
                try:
                    result = await function(*args, **kwargs)
                except self.control_flow:
                    raise
                except Exception as error:
                    await self.witness_async(name, arguments, error=str(error) or type(error).__name__)
                    raise
                await self.witness_async(name, arguments, result=result)
                return result

            return run_async

        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            if not active():
                return function(*args, **kwargs)
            arguments = arguments_of(args, kwargs)
            try:
                result = function(*args, **kwargs)
            except self.control_flow:
                raise
            except Exception as error:
                self.witness(name, arguments, error=str(error) or type(error).__name__)
                raise
            self.witness(name, arguments, result=result)
            return result

        return run


effects = Effects()
"""The ledger and witness of the turn an adapter is running (see :class:`Effects`)."""
