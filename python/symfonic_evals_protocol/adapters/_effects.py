"""The ledger and witness from a tool body: :data:`effects`, bound to the
running turn by :func:`bound_turn` while an adapter runs the framework, so
a tool reaches the harness's fixtures without the framework passing
anything through."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
import json
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

from .._async import AsyncTurn
from .._records import PromptRequest, ResumeRequest
from .._sync import Turn
from .._wire import _UNSET
from ._values import json_safe

__all__ = [
    "Effects",
    "bound_turn",
    "effects",
]

# -- the ledger from a tool body -----------------------------------------------


def _named(tool: Optional[str], arguments: Any) -> Dict[str, Any]:
    """What an effect names of its call: the tool, and the arguments only
    when given (a turn from before arguments were reported takes none)."""
    named: Dict[str, Any] = {"tool": tool}
    if arguments is not _UNSET:
        named["arguments"] = arguments
    return named

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

    def apply(self, key: str, tool: Optional[str] = None, arguments: Any = _UNSET) -> bool:
        """Records an effect under ``key`` (of ``tool``'s call, when named,
        applied with ``arguments``, when given: the harness keeps their
        digest, so a tool body run again on resume shows as the same effect
        under a new key); ``True``: perform it now, ``False``: it was
        applied before."""
        bound = self._bound()
        named = _named(tool, arguments)
        if isinstance(bound.turn, AsyncTurn):
            if bound.loop is None:
                raise TypeError("this turn is asynchronous: await effects.apply_async(...)")
            turn = bound.turn
            return bool(bound.on_loop(lambda: turn.ledger_apply(key, **named)))
        with bound.lock:
            return bound.turn.ledger_apply(key, **named)

    async def apply_async(self, key: str, tool: Optional[str] = None, arguments: Any = _UNSET) -> bool:
        """:meth:`apply` for a coroutine tool body."""
        bound = self._bound()
        named = _named(tool, arguments)
        if isinstance(bound.turn, AsyncTurn):
            return await bound.turn.ledger_apply(key, **named)
        with bound.lock:
            return bound.turn.ledger_apply(key, **named)

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
