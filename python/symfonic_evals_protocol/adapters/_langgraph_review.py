"""How the LangGraph adapter reads the interrupts a pause waits on and
answers them: which held call each interrupt reviews, which calls a
reviewer may edit, and the ``Command(resume=...)`` map one answer becomes.

A thread may wait on several interrupts at once (a ``Send`` fan-out, or
``create_agent``'s tool node, which runs each tool call as its own task:
two tools that call ``interrupt()`` wait side by side). The pause holds
them all, and one answer resumes them all with one ``Command``, keyed by
interrupt id. Three shapes of interrupt are told apart:

- ``batched``: LangChain's ``HumanInTheLoopMiddleware`` in its default
  mode, one request listing every gated call of a model turn
  (``action_requests``, ``review_configs``), answered with
  ``{"decisions": [...]}`` for the calls it lists, in order;
- ``per_call``: the middleware's ``interrupt_mode="per_call"``, one
  ``tool_approval`` request a gated call (it names the call's id),
  answered with a single decision;
- ``plain``: any other ``interrupt(value)`` (a tool asking a person, a
  review node), answered with the answer as it came, or, when there are as
  many plain interrupts as held calls, with the decision of the call at
  its place.

An edit answer (``{"decisions": [...]}``, one per held call in the order
the pause reported them) is dealt out to the interrupts by those rules; an
approval (``{"approved": true|false}``) reaches a middleware's interrupt as
the decision it means (approve, or reject), since the middleware accepts
nothing else.

The middleware tells the model of a reviewer's edit by prepending a notice
to the edited call's tool message (``... Executed instead: NAME with
arguments ARGS.``, then ``Tool response:`` and the tool's content): the
model reads it, the record's result is the tool's own answer
(:func:`without_edit_notice`).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from .._records import edit_decisions

__all__ = [
    "HITL_EDITS",
    "HITL_NODE",
    "describe",
    "editable",
    "executed_edits",
    "rejects",
    "resume_map",
    "without_edit_notice",
]

HITL_NODE = "HumanInTheLoopMiddleware.after_model"
"""The node ``create_agent`` adds for LangChain's human-in-the-loop middleware."""

HITL_EDITS = "hitl_edited_tool_calls"
"""The state key where the middleware keeps a reviewer's edits in batched
mode, by call id."""


EDIT_NOTICE_MARK = " Executed instead: "
"""What the middleware's notice of a reviewer's edit always says, whatever
its configurable ``edit_notice`` text."""

_TOOL_RESPONSE = "\n\nTool response:"
"""What the notice ends with when the tool answered something; the tool's
content follows on the next line."""


def _batched(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("action_requests"), list)


def _per_call(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("type") == "tool_approval" and isinstance(value.get("tool_call_id"), str)


def _reviewed(value: Any, calls: Sequence[Dict[str, Any]]) -> List[Optional[int]]:
    """For each held call, its place among the action requests of a
    batched request ``value`` (they list the calls it reviews in order),
    or ``None``: not reviewed."""
    requests = value["action_requests"]
    places: List[Optional[int]] = []
    at = 0
    for call in calls:
        request = requests[at] if at < len(requests) else None
        if isinstance(request, Mapping) and request.get("name") == call["name"]:
            places.append(at)
            at += 1
        else:
            places.append(None)
    return places


def describe(interrupts: Sequence[Any], calls: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """What the pause keeps of each waiting interrupt: its id, its shape
    and the held calls it reviews (their places in ``calls``), as
    ``{"id", "kind", "calls"}``. A batched request also marks each call it
    reviews with its place among the request's actions (``"reviewed"``)."""
    described: List[Dict[str, Any]] = []
    plain = [i for i in interrupts if not _batched(i.value) and not _per_call(i.value)]
    by_order = len(plain) == len(interrupts) == len(calls) and len(calls) > 1
    for at, interrupt in enumerate(interrupts):
        value = interrupt.value
        if _batched(value):
            places = _reviewed(value, calls)
            for call, place in zip(calls, places):
                if place is not None:
                    call["reviewed"] = place
            reviews = [n for n, place in enumerate(places) if place is not None]
            described.append({"id": interrupt.id, "kind": "batched", "calls": reviews})
        elif _per_call(value):
            reviews = [n for n, call in enumerate(calls) if call["framework_id"] == value["tool_call_id"]]
            described.append({"id": interrupt.id, "kind": "per_call", "calls": reviews})
        else:
            described.append({"id": interrupt.id, "kind": "plain", "calls": [at] if by_order else []})
    return described


def editable(interrupts: Sequence[Any], calls: Sequence[Dict[str, Any]]) -> List[str]:
    """The reported ids of the held calls a reviewer may edit: those a
    middleware's request reviews with ``edit`` among the allowed decisions
    (a batched request's ``review_configs``, a per-call interrupt's
    ``response_schema``)."""
    allowed: Dict[int, bool] = {}
    for interrupt in interrupts:
        value = interrupt.value
        if _batched(value):
            configs = {c.get("action_name"): c for c in value.get("review_configs") or [] if isinstance(c, Mapping)}
            for n, call in enumerate(calls):
                place = call.get("reviewed")
                if place is not None:
                    name = value["action_requests"][place].get("name")
                    allowed[n] = "edit" in (configs.get(name) or {}).get("allowed_decisions", [])
        elif _per_call(value):
            schema = getattr(interrupt, "response_schema", None) or {}
            mapping = (schema.get("discriminator") or {}).get("mapping") or {} if isinstance(schema, Mapping) else {}
            for n, call in enumerate(calls):
                if call["framework_id"] == value["tool_call_id"]:
                    allowed[n] = "edit" in mapping
    return [str(calls[n]["id"]) for n in sorted(allowed) if allowed[n]]


def _decisions(answer: Any, count: int) -> Optional[List[Dict[str, Any]]]:
    """One decision per held call: the edit answer's, or an approval's
    meaning for each call; ``None`` when ``answer`` is neither."""
    decisions = edit_decisions(answer)
    if decisions is not None:
        return decisions if len(decisions) == count else None
    if isinstance(answer, Mapping) and set(answer) == {"approved"} and isinstance(answer["approved"], bool):
        decision = {"type": "approve"} if answer["approved"] else {"type": "reject", "message": "not approved"}
        return [dict(decision) for _ in range(count)]
    return None


def resume_map(described: Sequence[Dict[str, Any]], count: int, answer: Any) -> Dict[str, Any]:
    """The ``Command(resume=...)`` map answering every interrupt the pause
    waits on with ``answer``, dealt out as the module describes: ``count``
    is how many calls the pause holds."""
    decisions = _decisions(answer, count)
    edit = edit_decisions(answer) is not None
    resume: Dict[str, Any] = {}
    for entry in described:
        kind, reviews = entry["kind"], entry["calls"]
        if kind == "batched" and decisions is not None and reviews:
            resume[entry["id"]] = {"decisions": [decisions[n] for n in reviews]}
        elif kind == "per_call" and decisions is not None and len(reviews) == 1:
            resume[entry["id"]] = decisions[reviews[0]]
        elif kind == "plain" and edit and decisions is not None and len(reviews) == 1:
            resume[entry["id"]] = decisions[reviews[0]]
        else:
            resume[entry["id"]] = answer
    return resume


def executed_edits(described: Sequence[Dict[str, Any]], calls: Sequence[Dict[str, Any]], answer: Any) -> Dict[str, Any]:
    """The arguments an edit answer gave the calls a per-call interrupt
    reviews, by the framework's call id: the middleware keeps no record of
    them in per-call mode, so the adapter keeps what it handed over."""
    decisions = edit_decisions(answer)
    if decisions is None or len(decisions) != len(calls):
        return {}
    edits: Dict[str, Any] = {}
    for entry in described:
        if entry["kind"] == "per_call":
            for n in entry["calls"]:
                if decisions[n].get("type") == "edit":
                    edits[calls[n]["framework_id"]] = decisions[n]["edited_action"]["args"]
    return edits


def rejects(answer: Any) -> bool:
    """Whether ``answer`` rejects what a static breakpoint holds: an
    approval that says no, or decisions that are not all approvals."""
    if isinstance(answer, Mapping) and set(answer) == {"approved"}:
        return answer["approved"] is not True
    decisions = edit_decisions(answer)
    return decisions is not None and any(d.get("type") != "approve" for d in decisions)


def without_edit_notice(content: Any) -> Any:
    """The content of an edited call's tool message without the notice the
    middleware prepended for the model: a string's text after ``Tool
    response:`` (nothing, when the tool answered nothing), a list's blocks
    after the notice's own. Content with no notice is returned as it is."""
    if isinstance(content, str):
        if EDIT_NOTICE_MARK not in content:
            return content
        head, found, rest = content.partition(_TOOL_RESPONSE)
        if not found:
            return ""  # the notice alone: the tool's content was empty
        if EDIT_NOTICE_MARK not in head:
            return content
        return rest[1:] if rest.startswith("\n") else rest
    if isinstance(content, list) and content:
        first = content[0]
        text = first if isinstance(first, str) else first.get("text") if isinstance(first, Mapping) else None
        if isinstance(text, str) and EDIT_NOTICE_MARK in text:
            return content[1:]
    return content
