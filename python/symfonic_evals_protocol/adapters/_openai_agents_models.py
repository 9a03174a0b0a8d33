"""The OpenAI Agents SDK adapter's journaled models: every model call of
one attempt at a request, whichever agent of the run makes it, kept in the
attempt's journal (:class:`._journal.RunJournal`) so a
client's retry after a crash replays the responses instead of asking the
model again.

A run is more than its starting agent: a handoff hands the conversation to
another agent, with a model of its own. So the adapter runs a copy of the
whole handoff graph, each agent cloned with its model journaled, every
model sharing one call counter (a run's model calls come one after
another, so the counter orders them the same way on every attempt). A
``Handoff`` object made by ``handoff(agent)`` is copied with its target
replaced by the target's clone, both where the SDK walks the graph
(restoring a saved ``RunState`` finds agents by name through the handoffs)
and where it invokes the handoff.
"""

from __future__ import annotations

import dataclasses
import json
import weakref
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional

from agents import Agent, RunConfig
from agents.handoffs import Handoff
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import Response, ResponseCompletedEvent, ResponseOutputItem
from pydantic import TypeAdapter

from ._journal import RunJournal

_OUTPUT_ITEM: "TypeAdapter[Any]" = TypeAdapter(ResponseOutputItem)


def dump_response(response: ModelResponse) -> str:
    """A model response as the journal keeps it."""
    output = [
        item.model_dump(mode="json", by_alias=True, exclude_none=True) if hasattr(item, "model_dump") else item
        for item in response.output
    ]
    return json.dumps({"output": output, "response_id": response.response_id})


def load_response(text: str) -> ModelResponse:
    """A kept model response, as the model gave it."""
    data = json.loads(text)
    output = [_OUTPUT_ITEM.validate_python(item) for item in data["output"]]
    return ModelResponse(output=output, usage=Usage(), response_id=data.get("response_id"))


def completed_event(response: ModelResponse) -> ResponseCompletedEvent:
    """A kept response as a streamed run reads a model's: the terminal
    ``response.completed`` event, whose response carries the output."""
    body = Response(
        id=response.response_id or "journaled",
        created_at=0.0,
        model="journaled",
        object="response",
        output=list(response.output),
        parallel_tool_calls=False,
        tool_choice="auto",
        tools=[],
    )
    return ResponseCompletedEvent(type="response.completed", response=body, sequence_number=0)


class _Counter:
    """The next model call's place in the attempt, shared by its models."""

    def __init__(self) -> None:
        self.next = 0

    def take(self) -> int:
        seq, self.next = self.next, self.next + 1
        return seq


class JournaledModel(Model):
    """A model whose responses are kept per attempt: a retry gets the
    responses the crashed attempt got, in order, and asks the model only
    past them."""

    def __init__(self, inner: Model, journal: RunJournal, attempt: str, counter: "_Counter | None" = None) -> None:
        self._inner = inner
        self._journal = journal
        self._attempt = attempt
        self._counter = counter or _Counter()

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        seq = self._counter.take()
        kept = self._journal.response(self._attempt, seq)
        if kept is not None:
            return load_response(kept)
        response = await self._inner.get_response(*args, **kwargs)
        self._journal.keep(self._attempt, seq, dump_response(response))
        return response

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """The streamed call, journaled as :meth:`get_response` is: a kept
        response comes back as its ``response.completed`` event alone; a
        fresh one streams as the model streams it and is kept when it
        completes (its output, or the items streamed before a completion
        that carries none)."""
        seq = self._counter.take()
        kept = self._journal.response(self._attempt, seq)
        if kept is not None:
            yield completed_event(load_response(kept))
            return
        streamed: List[Any] = []
        async for event in self._inner.stream_response(*args, **kwargs):
            if getattr(event, "type", None) == "response.output_item.done":
                streamed.append(event.item)
            if isinstance(event, ResponseCompletedEvent):
                output = list(event.response.output) or streamed
                kept_response = ModelResponse(output=output, usage=Usage(), response_id=event.response.id)
                self._journal.keep(self._attempt, seq, dump_response(kept_response))
            yield event

    async def _cleanup_on_run_end(self, owner: object) -> None:
        await self._inner._cleanup_on_run_end(owner)

    def get_retry_advice(self, request: Any) -> Any:
        return self._inner.get_retry_advice(request)


class JournaledGraph:
    """The agents of one attempt: ``start`` is the starting agent's clone;
    :attr:`clones` keeps every clone alive (a ``Handoff`` holds its target
    only by weak reference)."""

    def __init__(self, agent: Agent[Any], config: RunConfig, journal: RunJournal, attempt: str) -> None:
        self._config = config
        self._journal = journal
        self._attempt = attempt
        self._counter = _Counter()
        self.clones: Dict[int, Agent[Any]] = {}
        self._handoffs: List[Handoff] = []
        self.start = self._clone(agent)

    def _model(self, agent: Agent[Any]) -> JournaledModel:
        model = agent.model
        inner = model if isinstance(model, Model) else self._config.model_provider.get_model(model)
        return JournaledModel(inner, self._journal, self._attempt, self._counter)

    def _clone(self, agent: Agent[Any]) -> Agent[Any]:
        found = self.clones.get(id(agent))
        if found is not None:
            return found
        clone = agent.clone(model=self._model(agent), handoffs=[])
        # Registered before its handoffs are: a handoff back to this agent
        # (triage -> billing -> triage) finds the clone instead of looping.
        self.clones[id(agent)] = clone
        clone.handoffs = [self._handoff(item) for item in agent.handoffs]
        return clone

    def _handoff(self, item: Any) -> Any:
        if isinstance(item, Agent):
            return self._clone(item)
        target = _target(item)
        if target is None:
            # A custom handoff that names no target: it runs as written,
            # its agent's model calls unjournaled.
            return item
        clone = self._clone(target)
        invoke = item.on_invoke_handoff
        clones = self.clones

        async def on_invoke_handoff(context: Any, arguments: str) -> Any:
            chosen = await invoke(context, arguments)
            return clones.get(id(chosen), chosen)

        copied = dataclasses.replace(item, on_invoke_handoff=on_invoke_handoff)
        copied._agent_ref = weakref.ref(clone)
        self._handoffs.append(copied)
        return copied


def _target(item: Any) -> Optional[Agent[Any]]:
    """The agent a handoff entry hands to, where it names one."""
    if isinstance(item, Agent):
        return item
    reference = getattr(item, "_agent_ref", None) if isinstance(item, Handoff) else None
    target = reference() if reference is not None else None
    return target if isinstance(target, Agent) else None


def reachable(agent: Agent[Any]) -> Iterator[Agent[Any]]:
    """``agent`` and every agent its handoffs reach, each once: what a run
    starting at ``agent`` may hand the conversation to (its tools are the
    deployment's too)."""
    seen: set = set()
    queue = [agent]
    while queue:
        current = queue.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        queue.extend(t for t in map(_target, current.handoffs) if t is not None)
