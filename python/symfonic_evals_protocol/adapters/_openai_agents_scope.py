"""What the Agents SDK adapter learns while one run goes on, and the seams
it learns it through: the run's scope (a context variable the adapter sets
around each run), the run hooks that record each model call's input and
forward to the adopter's hooks, and the watches on MCP servers and tool
guardrails that note which calls failed or were refused."""

from __future__ import annotations

import contextvars
import inspect
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple

from agents import RunHooks

from ._gate import Trace
from ._openai_agents_items import arguments_of, render_model_input, result_of, text_of

__all__ = ["Call", "Hooks", "SCOPE", "Scope", "note_guarded", "watch_mcp_server"]


@dataclass
class Call:
    """A tool call as the run's items showed it: its tool, its arguments,
    and its output once it ran."""

    name: str
    arguments: Any
    output: Any = None
    ran: bool = False


@dataclass
class Scope:
    """What the SDK told the adapter while one run went on."""

    model_inputs: List[str] = field(default_factory=list)
    errors: Dict[str, str] = field(default_factory=dict)
    """Call ids whose tool failed, with the error as text."""
    rejected: Set[str] = field(default_factory=set)
    """Call ids whose approval a person rejected."""
    guarded: Dict[str, str] = field(default_factory=dict)
    """Call ids a tool input guardrail rejected, with its name."""
    guarded_calls: Dict[str, "Call"] = field(default_factory=dict)
    """The calls those are (a run the guardrail halted has no item of them)."""
    trace: Trace = field(default_factory=Trace)
    """What the adopter's gates decided (:mod:`._gate`)."""


SCOPE: "contextvars.ContextVar[Optional[Scope]]" = contextvars.ContextVar("symfonic_evals_openai_agents", default=None)


def note_guarded(call_id: str, guardrail: str, tool: str, arguments: str) -> None:
    """Notes, in the running turn's scope, a call a tool guardrail rejected."""
    scope = SCOPE.get()
    if scope is not None:
        scope.guarded[call_id] = guardrail
        scope.guarded_calls[call_id] = Call(tool, arguments_of({"arguments": arguments}))


# -- the SDK's seams -------------------------------------------------------------


class Hooks(RunHooks):  # type: ignore[type-arg]
    """Records each model call's input; forwards everything to the
    adopter's hooks, if any, as the SDK called it (positionally or by
    keyword: the SDK calls ``on_handoff(context=..., from_agent=...,
    to_agent=...)``)."""

    def __init__(self, inner: Optional[RunHooks]) -> None:  # type: ignore[type-arg]
        self._inner = inner

    async def _forward(self, name: str, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
        if self._inner is not None:
            await getattr(self._inner, name)(*args, **kwargs)

    async def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        scope = SCOPE.get()
        if scope is not None:
            bound = _LLM_START.bind(*args, **kwargs).arguments
            scope.model_inputs.append(render_model_input(bound["system_prompt"], bound["input_items"]))
        await self._forward("on_llm_start", args, kwargs)

    async def on_llm_end(self, *args: Any, **kwargs: Any) -> None:
        await self._forward("on_llm_end", args, kwargs)

    async def on_agent_start(self, *args: Any, **kwargs: Any) -> None:
        await self._forward("on_agent_start", args, kwargs)

    async def on_agent_end(self, *args: Any, **kwargs: Any) -> None:
        await self._forward("on_agent_end", args, kwargs)

    async def on_handoff(self, *args: Any, **kwargs: Any) -> None:
        await self._forward("on_handoff", args, kwargs)

    async def on_tool_start(self, *args: Any, **kwargs: Any) -> None:
        await self._forward("on_tool_start", args, kwargs)

    async def on_tool_end(self, *args: Any, **kwargs: Any) -> None:
        await self._forward("on_tool_end", args, kwargs)


def _llm_start(context: Any, agent: Any, system_prompt: Any, input_items: Any) -> None:
    """The SDK's ``RunHooks.on_llm_start`` parameters, to bind a call to."""


_LLM_START = inspect.signature(_llm_start)


def watch_mcp_server(server: Any) -> None:
    """Has an MCP server tell the adapter which calls its tool answered
    with ``isError`` (the SDK hands the error text to the model as output,
    not as a failure), keeping the adopter's own custom-data extractor."""
    if getattr(server, "_symfonic_watched", False):
        return
    inner = getattr(server, "custom_data_extractor", None)

    async def extractor(context: Any) -> Any:
        scope = SCOPE.get()
        if scope is not None and getattr(context, "is_error", False):
            call_id = getattr(getattr(context, "run_context", None), "tool_call_id", None)
            if isinstance(call_id, str):
                scope.errors[call_id] = text_of(result_of(context.tool_output)) or "the MCP tool answered with an error"
        if inner is None:
            return None
        value = inner(context)
        return await value if inspect.isawaitable(value) else value

    server.custom_data_extractor = extractor
    server._symfonic_watched = True
