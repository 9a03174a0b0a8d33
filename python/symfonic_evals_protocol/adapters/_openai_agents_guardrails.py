"""The Agents SDK's guardrails as the Agents SDK adapter reports them:
refusals, never failures.

- An agent's input or output guardrail whose tripwire triggers halts the
  run (``InputGuardrailTripwireTriggered``,
  ``OutputGuardrailTripwireTriggered``): the turn completes with no answer
  and the guardrail's ``rejected`` stage in ``governance``, the calls the
  run made before it as they went.
- A tool input guardrail that rejects a call (``reject_content``: the run
  goes on, the model hears the message; ``raise_exception``: the run halts
  with ``ToolInputGuardrailTripwireTriggered``) refuses that call: it is
  reported refused by the guardrail's stage, and the stage ``rejected``.
  The SDK's result does not say which call a tool guardrail judged, so the
  adapter watches each tool input guardrail's function (once per
  guardrail, keeping its name) and notes the call id it rejected.
- A tool output guardrail's ``raise_exception`` halts the run as an
  agent's tripwire does (the call ran: it is not refused).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, List, Optional

from agents.exceptions import (
    InputGuardrailTripwireTriggered,
    OutputGuardrailTripwireTriggered,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailTripwireTriggered,
)

__all__ = ["TRIPWIRES", "Tripped", "tripped", "watch_tool_guardrails"]

TRIPWIRES = (
    InputGuardrailTripwireTriggered,
    OutputGuardrailTripwireTriggered,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailTripwireTriggered,
)
"""The exceptions a guardrail's tripwire halts a run with."""

_REJECTING = ("reject_content", "raise_exception")


@dataclass
class Tripped:
    """A run a guardrail halted, read as a run result: the items it made
    before the guardrail, no interruption and no output; ``stage`` is the
    guardrail's name."""

    stage: str
    new_items: List[Any] = field(default_factory=list)
    interruptions: List[Any] = field(default_factory=list)
    final_output: str = ""


def tripped(error: BaseException) -> Tripped:
    """The halted run of a tripwire exception (one of :data:`TRIPWIRES`)."""
    if isinstance(error, (InputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered)):
        name = error.guardrail_result.guardrail.get_name()
    else:
        name = error.guardrail.get_name()  # type: ignore[attr-defined]
    run_data = getattr(error, "run_data", None)
    return Tripped(str(name), list(getattr(run_data, "new_items", None) or []))


def watch_tool_guardrails(tools: Iterable[Any], note: Callable[[str, str, str, str], None]) -> None:
    """Wraps each tool input guardrail's function of ``tools`` so that a
    call it rejects is noted as ``note(call_id, guardrail name, tool name,
    arguments as the model sent them)`` (a run the guardrail halts keeps no
    item of the call); the guardrail's own result is returned unchanged. A
    guardrail is wrapped once, however many deployments share it."""
    for tool in tools:
        for guardrail in getattr(tool, "tool_input_guardrails", None) or []:
            original = guardrail.guardrail_function
            if getattr(original, "_symfonic_watched", False):
                continue
            name = guardrail.get_name()

            @functools.wraps(original)
            async def watched(data: Any, _original: Any = original, _name: str = name) -> Any:
                output = _original(data)
                if inspect.isawaitable(output):
                    output = await output
                behavior: Optional[dict] = getattr(output, "behavior", None)
                context = getattr(data, "context", None)
                call_id = getattr(context, "tool_call_id", None)
                if isinstance(behavior, dict) and behavior.get("type") in _REJECTING and isinstance(call_id, str):
                    note(call_id, _name, str(getattr(context, "tool_name", "")), str(getattr(context, "tool_arguments", "")))
                return output

            watched._symfonic_watched = True  # type: ignore[attr-defined]
            guardrail.guardrail_function = watched
