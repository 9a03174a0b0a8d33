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

The pieces live one concern a module: :mod:`._refusals`, :mod:`._values`,
:mod:`._lease`, :mod:`._store` and :mod:`._effects`; this module gathers
them under the names adapters import.
"""

from __future__ import annotations

from .._sync import Turn
from ._effects import Effects, bound_turn, effects
from ._lease import RunLease
from ._refusals import foreign_token, invalid_answer, question_mismatch, replayed, require_approval, stale, unknown_token
from ._store import ADAPTER_STORE_FILE, AdapterStore, Begun, CallIds, PauseRow, PauseTable, TurnJournal
from ._values import json_safe, request_digest

__all__ = [
    "ADAPTER_STORE_FILE",
    "AdapterStore",
    "Begun",
    "CallIds",
    "Effects",
    "PauseRow",
    "PauseTable",
    "RunLease",
    "Turn",
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
