"""The asyncio server: an :class:`AsyncDeployment` whose turns are coroutines,
for deployments built on async agent frameworks and clients.

The harness keeps one request outstanding at a time, so turns run one after
another; inside a turn, a handler may await anything (model calls, tool
bodies, ``asyncio.gather``). Reading stdin happens on a worker thread, so a
blocking pipe read never stalls the event loop.
"""

from __future__ import annotations

import asyncio
import sys
from typing import IO, Any, Callable, List, Optional

from . import _wire
from ._records import Capabilities, PromptRequest, ProtocolError, ResetRequest, ResumeRequest, ReviewRequest, TurnFailure, TurnRecord
from ._staged import prepare_early

__all__ = ["AsyncTurn", "AsyncDeployment", "serve_async"]


async def _read(channel: _wire.Channel) -> Optional[_wire.Message]:
    return await asyncio.get_running_loop().run_in_executor(None, channel.read)


class AsyncTurn:
    """The harness's side of one request, for a coroutine turn handler."""

    def __init__(self, request_id: int, channel: _wire.Channel) -> None:
        self._id = request_id
        self._channel = channel
        self._open = True
        # Concurrent tool bodies share one channel: a ledger round trip must
        # not interleave with another one's.
        self._lock = asyncio.Lock()

    @property
    def request_id(self) -> int:
        """The id of the request this turn answers."""
        return self._id

    def _check_open(self) -> None:
        if not self._open:
            # A handler bug, not the harness's: the turn answers UnhandledException.
            raise RuntimeError("this turn has already been answered")

    async def ledger_apply(self, key: str, tool: Optional[str] = None, arguments: Any = _wire._UNSET) -> bool:
        """Record an effect under ``key`` in the harness's side-effect ledger.

        ``tool`` names the tool whose call the effect belongs to: a pack then
        judges the gated action by its own effects and allows the others (a
        notice, an audit row). Without it, the whole ledger is judged.
        ``arguments`` (any JSON value) are what the effect is applied with;
        the harness keeps only their digest, so a pack sees the same effect
        applied again under another key (a step re-run on resume).

        Returns ``True`` when the key is new and the caller must now perform
        the effect, ``False`` when it was applied before. Safe to call from
        concurrent tasks of one turn: round trips are taken one at a time.
        """
        async with self._lock:
            self._check_open()
            self._channel.write(_wire.ledger_apply(self._id, key, tool, arguments))
            return _wire.ledger_applied(self._id, key, await _read(self._channel))

    async def witness(
        self, tool: str, arguments: Any, *, result: Any = _wire._UNSET, error: Any = _wire._UNSET
    ) -> None:
        """Record, from inside a tool body, the arguments it received and how
        it ended: ``result=`` what it returned, or ``error=`` what failed."""
        async with self._lock:
            self._check_open()
            self._channel.write(_wire.witness(self._id, tool, arguments, result, error))

    def _close(self) -> None:
        self._open = False


class AsyncDeployment:
    """Subclass and override with coroutines: the deployment the harness
    evaluates. As with the sync :class:`Deployment`, one instance lives for
    one process and durable facts belong under :attr:`durable_dir`."""

    def __init__(self, durable_dir: str) -> None:
        self.durable_dir = durable_dir

    def capabilities(self) -> Capabilities:
        """The evidence sent in the handshake."""
        return Capabilities()

    async def start(self) -> None:
        """Called once on the event loop before the handshake is answered:
        open clients and connections here."""

    async def run_turn(self, request: PromptRequest, turn: AsyncTurn) -> TurnRecord:
        """Run one prompt turn; raise :class:`TurnFailure` for a typed error."""
        raise TurnFailure("NotImplemented", "this deployment runs no prompt turns")

    async def resume(self, request: ResumeRequest, turn: AsyncTurn) -> TurnRecord:
        """Redeem a pause; raise :class:`TurnFailure` for a typed error."""
        raise TurnFailure("ResumeUnsupported", "this deployment declares no resume operation")

    async def review_procedure(self, request: ReviewRequest, turn: AsyncTurn) -> TurnRecord:
        """Carry out an operator's decision through the structured review
        door, returning the door's evidence as attributes; raise
        :class:`TurnFailure` (``NoSuchDraft``, ``NoSuchProcedure``) when it
        cannot. Declare the ``review`` operation to have the harness call it."""
        raise TurnFailure("ReviewUnsupported", "this deployment declares no review operation")

    async def reset(self, request: ResetRequest, turn: AsyncTurn) -> TurnRecord:
        """Reset (or cancel) a conversation: forget whatever it had pending,
        its pauses included, so a token issued before the reset is refused
        after it; return a record (it may be empty). Declare the ``reset``
        operation to have the harness call it."""
        raise TurnFailure("ResetUnsupported", "this deployment declares no reset operation")

    async def close(self) -> None:
        """Called once at orderly shutdown."""


async def serve_channel(deployment: AsyncDeployment, channel: _wire.Channel, exception_messages: bool = False) -> int:
    """Serves turns to ``deployment`` once the handshake was read; a turn's
    exception reports its message only when ``exception_messages`` is true."""
    await deployment.start()
    channel.write(_wire.ready(deployment.capabilities().to_json()))
    while True:
        message = await _read(channel)
        if _wire.is_shutdown(message):
            await deployment.close()
            return 0
        assert message is not None
        request_id, request = _wire.parse_request(message)
        turn = AsyncTurn(request_id, channel)
        try:
            if isinstance(request, PromptRequest):
                record = await deployment.run_turn(request, turn)
            elif isinstance(request, ReviewRequest):
                record = await deployment.review_procedure(request, turn)
            elif isinstance(request, ResetRequest):
                record = await deployment.reset(request, turn)
            else:
                record = await deployment.resume(request, turn)
            line = channel.encode(_wire.answer(request_id, record))
        except ProtocolError:
            raise
        except Exception as error:  # a broken turn must not end the session
            line = channel.encode(_wire.failure(request_id, error, exception_messages))
        finally:
            turn._close()
        async with turn._lock:
            channel.send(line)


async def serve_async(
    factory: Callable[[str], AsyncDeployment],
    *,
    argv: Optional[List[str]] = None,
    reader: Optional[IO[bytes]] = None,
    writer: Optional[IO[bytes]] = None,
    exception_messages: bool = False,
) -> int:
    """Run the protocol on the running event loop until shutdown or end of
    input; returns an exit code. Outside a loop, :func:`serve` does the same
    (``serve(factory)`` runs an :class:`AsyncDeployment` on a fresh loop),
    ``exception_messages`` included."""
    out = writer if writer is not None else sys.stdout.buffer
    channel = _wire.Channel(reader if reader is not None else sys.stdin.buffer, out)
    if writer is None:
        sys.stdout = sys.stderr
    prepare_early(factory)
    hello = await _read(channel)
    if hello is None:
        return 0
    deployment = factory(_wire.accept_hello(hello, argv))
    if not isinstance(deployment, AsyncDeployment):
        raise TypeError("serve_async serves an AsyncDeployment; serve() serves a Deployment")
    return await serve_channel(deployment, channel, exception_messages)
