"""The blocking server: a :class:`Deployment` whose turns are plain methods."""

from __future__ import annotations

import sys
from typing import IO, Any, Callable, List, Optional, Union

from . import _wire
from ._async import AsyncDeployment, serve_channel
from ._staged import prepare_early
from ._records import Capabilities, ProtocolError, PromptRequest, ResetRequest, ResumeRequest, ReviewRequest, TurnFailure, TurnRecord

__all__ = ["Turn", "Deployment", "serve"]


class Turn:
    """The harness's side of one request, available while the turn runs."""

    def __init__(self, request_id: int, channel: _wire.Channel) -> None:
        self._id = request_id
        self._channel = channel
        self._open = True

    @property
    def request_id(self) -> int:
        """The id of the request this turn answers."""
        return self._id

    def _check_open(self) -> None:
        if not self._open:
            # A handler bug, not the harness's: the turn answers UnhandledException.
            raise RuntimeError("this turn has already been answered")

    def ledger_apply(self, key: str, tool: Optional[str] = None, arguments: Any = _wire._UNSET) -> bool:
        """Record an effect under ``key`` in the harness's side-effect ledger.

        ``tool`` names the tool whose call the effect belongs to: a pack then
        judges the gated action by its own effects and allows the others (a
        notice, an audit row). Without it, the whole ledger is judged.
        ``arguments`` (any JSON value) are what the effect is applied with;
        the harness keeps only their digest, so a pack sees the same effect
        applied again under another key (a step re-run on resume).

        Returns ``True`` when the key is new and the caller must now perform
        the effect, ``False`` when it was applied before. The harness owns the
        ledger, so its counts are what the pack reads, whatever we claim.
        """
        self._check_open()
        self._channel.write(_wire.ledger_apply(self._id, key, tool, arguments))
        return _wire.ledger_applied(self._id, key, self._channel.read())

    def witness(self, tool: str, arguments: Any, *, result: Any = _wire._UNSET, error: Any = _wire._UNSET) -> None:
        """Record, from inside a tool body, the arguments it received and how
        it ended: ``result=`` what it returned, or ``error=`` what failed.

        Call it where the body runs, not where the call is reported: the
        pack compares the two, so a bridge that drops arguments or turns an
        upstream error into a success shows.
        """
        self._check_open()
        self._channel.write(_wire.witness(self._id, tool, arguments, result, error))

    def _close(self) -> None:
        self._open = False


class Deployment:
    """Subclass and override: the deployment the harness evaluates.

    One instance lives for one process; the harness restarts the process to
    test what survives, so durable facts belong under :attr:`durable_dir`.
    """

    def __init__(self, durable_dir: str) -> None:
        self.durable_dir = durable_dir

    def capabilities(self) -> Capabilities:
        """The evidence sent in the handshake."""
        return Capabilities()

    def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
        """Run one prompt turn; raise :class:`TurnFailure` for a typed error."""
        raise TurnFailure("NotImplemented", "this deployment runs no prompt turns")

    def resume(self, request: ResumeRequest, turn: Turn) -> TurnRecord:
        """Redeem a pause; raise :class:`TurnFailure` for a typed error."""
        raise TurnFailure("ResumeUnsupported", "this deployment declares no resume operation")

    def review_procedure(self, request: ReviewRequest, turn: Turn) -> TurnRecord:
        """Carry out an operator's decision through the structured review
        door, returning the door's evidence as attributes; raise
        :class:`TurnFailure` (``NoSuchDraft``, ``NoSuchProcedure``) when it
        cannot. Declare the ``review`` operation to have the harness call it."""
        raise TurnFailure("ReviewUnsupported", "this deployment declares no review operation")

    def reset(self, request: ResetRequest, turn: Turn) -> TurnRecord:
        """Reset (or cancel) a conversation: forget whatever it had pending,
        its pauses included, so a token issued before the reset is refused
        after it; return a record (it may be empty). Declare the ``reset``
        operation to have the harness call it."""
        raise TurnFailure("ResetUnsupported", "this deployment declares no reset operation")

    def close(self) -> None:
        """Called once at orderly shutdown."""


Factory = Callable[[str], Union[Deployment, AsyncDeployment]]


def _streams(reader: Optional[IO[bytes]], writer: Optional[IO[bytes]]) -> _wire.Channel:
    """The channel, with ``sys.stdout`` pointed at stderr when the protocol
    owns the real stdout, so a stray ``print`` cannot corrupt the stream."""
    out = writer if writer is not None else sys.stdout.buffer
    channel = _wire.Channel(reader if reader is not None else sys.stdin.buffer, out)
    if writer is None:
        sys.stdout = sys.stderr
    return channel


def serve(
    factory: Factory,
    *,
    argv: Optional[List[str]] = None,
    reader: Optional[IO[bytes]] = None,
    writer: Optional[IO[bytes]] = None,
    exception_messages: bool = False,
) -> int:
    """Run the protocol until shutdown or end of input; returns an exit code.

    ``factory`` builds the deployment from the durable directory; when it
    builds an :class:`AsyncDeployment`, its turns run on an asyncio event
    loop (see :func:`serve_async` to serve from a loop already running). A
    turn that raises :class:`TurnFailure` answers with that typed error; any
    other exception answers ``UnhandledException`` naming the exception's
    type, qualified name and frames (file relative to the working
    directory, line, function), never its message or locals, which may
    quote turn content; and the process keeps serving. A
    :class:`ProtocolError` ends it.

    A :class:`Staged` factory (:func:`staged`, or an adapter's
    ``deployment(...)``) builds its first stage before reading the
    handshake, so a spare started ahead of a restart has it built.

    ``exception_messages=True`` is the opt-in for deployments whose
    exception texts hold no turn content: each exception's message (its
    ``str()``, up to 2,000 characters) is then sent too, and reports and
    failure messages show it in clear.
    """
    channel = _streams(reader, writer)
    prepare_early(factory)
    hello = channel.read()
    if hello is None:
        return 0
    deployment = factory(_wire.accept_hello(hello, argv))
    if isinstance(deployment, AsyncDeployment):
        import asyncio

        return asyncio.run(serve_channel(deployment, channel, exception_messages))
    channel.write(_wire.ready(deployment.capabilities().to_json()))
    while True:
        message = channel.read()
        if _wire.is_shutdown(message):
            deployment.close()
            return 0
        assert message is not None
        request_id, request = _wire.parse_request(message)
        turn = Turn(request_id, channel)
        try:
            if isinstance(request, PromptRequest):
                record = deployment.run_turn(request, turn)
            elif isinstance(request, ReviewRequest):
                record = deployment.review_procedure(request, turn)
            elif isinstance(request, ResetRequest):
                record = deployment.reset(request, turn)
            else:
                record = deployment.resume(request, turn)
            line = channel.encode(_wire.answer(request_id, record))
        except ProtocolError:
            raise
        except Exception as error:  # a broken turn must not end the session
            line = channel.encode(_wire.failure(request_id, error, exception_messages))
        finally:
            turn._close()
        channel.send(line)
