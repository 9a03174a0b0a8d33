"""An asynchronous LangGraph graph (``async def`` nodes and tools, run with
``ainvoke`` or ``astream``) as an :class:`AsyncDeployment`, with the same
constructor arguments as :class:`~.langgraph.LangGraphDeployment`.

The adapter's bookkeeping is the synchronous deployment's, run on a worker
thread (``asyncio.to_thread``); each run of the graph is handed back to the
event loop the deployment serves on (``ainvoke``, or ``astream`` drained
when ``streaming``), in the context of the turn, so tool bodies reach the
turn's ledger (``await effects.apply_async`` on the loop, the blocking
``effects.apply`` in a plain ``def`` tool LangGraph runs on a thread). The
checkpointer a graph compiled without one gets is LangGraph's
``AsyncSqliteSaver`` on the same file under the durable directory: its
synchronous reads, made from the worker thread, run on the loop too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import os
from typing import Any, Dict, Optional

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import StateGraph

from .._async import AsyncDeployment, AsyncTurn
from .._staged import StagedFactory
from .._records import Capabilities, PromptRequest, ResumeRequest, ReviewRequest, TurnRecord
from .langgraph import CHECKPOINT_FILE, LangGraphDeployment

__all__ = ["AsyncLangGraphDeployment"]


class _OnLoop(LangGraphDeployment):
    """The synchronous deployment whose graph runs are handed to ``loop``."""

    def __init__(self, durable_dir: str, graph: Any, loop: asyncio.AbstractEventLoop, streaming: bool, **options: Any):
        super().__init__(durable_dir, graph, **options)
        self._turn_loop = loop
        self._streaming = streaming

    def _invoke(self, graph_input: Any, config: Dict[str, Any]) -> None:
        loop = self._turn_loop
        assert loop is not None
        options = {} if self._durability is None else {"durability": self._durability}

        async def run() -> None:
            if self._streaming:
                async for _ in self._graph.astream(graph_input, config, **options):
                    pass
            else:
                await self._graph.ainvoke(graph_input, config, **options)

        done: "concurrent.futures.Future[None]" = concurrent.futures.Future()

        def settle(task: "asyncio.Task[None]") -> None:
            if task.cancelled():
                done.cancel()
            elif task.exception() is not None:
                done.set_exception(task.exception())  # type: ignore[arg-type]
            else:
                done.set_result(None)

        def begin() -> None:
            # Runs in the turn's context (bound effects), which the task copies.
            loop.create_task(run()).add_done_callback(settle)

        loop.call_soon_threadsafe(begin, context=contextvars.copy_context())
        done.result()


class AsyncLangGraphDeployment(StagedFactory, AsyncDeployment):
    """A LangGraph graph run asynchronously, served as an
    :class:`AsyncDeployment`: ``graph`` and ``options`` as
    :class:`~.langgraph.LangGraphDeployment` takes them (``validate_answer``,
    ``make_input``, ``config``, ``durability``, ``token_codec``, ...), and
    ``streaming`` to run each turn with ``astream`` (drained) instead of
    ``ainvoke``, as an app that streams does. Subclass the synchronous
    deployment's seams through ``kind`` (a :class:`LangGraphDeployment`
    subclass, e.g. one overriding ``thread_config``)."""

    def __init__(
        self, durable_dir: str, graph: Any, *, streaming: bool = False, kind: Optional[type] = None, **options: Any
    ) -> None:
        super().__init__(durable_dir)
        self._graph = graph
        self._streaming = streaming
        self._kind = kind
        self._options = options
        self._connection: Optional[aiosqlite.Connection] = None
        self._inner: Optional[LangGraphDeployment] = None

    @property
    def inner(self) -> LangGraphDeployment:
        """The synchronous deployment doing the bookkeeping (after ``start``)."""
        if self._inner is None:
            raise RuntimeError("the deployment has not started")
        return self._inner

    async def start(self) -> None:
        graph = self._graph
        if isinstance(graph, StateGraph) or getattr(graph, "checkpointer", None) is None:
            self._connection = await aiosqlite.connect(os.path.join(self.durable_dir, CHECKPOINT_FILE))
            saver = AsyncSqliteSaver(self._connection)
            if isinstance(graph, StateGraph):
                graph = graph.compile(checkpointer=saver)
            else:
                graph = graph.copy(update={"checkpointer": saver})
        kind = type("OnLoop", (_OnLoop, self._kind), {}) if self._kind is not None else _OnLoop
        self._inner = kind(self.durable_dir, graph, asyncio.get_running_loop(), self._streaming, **self._options)

    def capabilities(self) -> Capabilities:
        return self.inner.capabilities()

    async def run_turn(self, request: PromptRequest, turn: AsyncTurn) -> TurnRecord:
        return await asyncio.to_thread(self.inner.run_turn, request, turn)  # type: ignore[arg-type]

    async def resume(self, request: ResumeRequest, turn: AsyncTurn) -> TurnRecord:
        return await asyncio.to_thread(self.inner.resume, request, turn)  # type: ignore[arg-type]

    async def review_procedure(self, request: ReviewRequest, turn: AsyncTurn) -> TurnRecord:
        return await asyncio.to_thread(self.inner.review_procedure, request, turn)  # type: ignore[arg-type]

    async def close(self) -> None:
        if self._inner is not None:
            self._inner.close()
        if self._connection is not None:
            await self._connection.close()
