"""How the Agents SDK adapter reads the SDK's items: a message's text, a
model call's input as text, a tool's output as the result to report, a
call's arguments, and the typed error a failed run answers with."""

from __future__ import annotations

import json
from typing import Any, Optional

from agents.exceptions import AgentsException

from .._records import TurnFailure
from ._values import json_safe

__all__ = ["arguments_of", "failure_of", "render_model_input", "result_of", "text_of"]


def text_of(content: Any) -> str:
    """The text of a message's content (a string, or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        for key in ("text", "refusal"):
            if isinstance(content.get(key), str):
                return str(content[key])
        return json.dumps(json_safe(content), ensure_ascii=False)
    if isinstance(content, (list, tuple)):
        return "".join(text_of(part) for part in content)
    return text_of(json_safe(content))


def render_model_input(system_prompt: Optional[str], items: Any) -> str:
    """One model call's input as text: the instructions, then each input
    item as the model receives it (a message as ``role: text``, a tool call
    as ``call name arguments``, a tool's output as ``tool call_id -> output``,
    with the output's text as it is, not re-escaped)."""
    lines = [f"system: {system_prompt}"] if system_prompt else []
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for raw in items or []:
        item = raw if isinstance(raw, dict) else json_safe(raw)
        if not isinstance(item, dict):
            lines.append(str(item))
            continue
        kind = item.get("type")
        if item.get("role") is not None and kind in (None, "message"):
            lines.append(f"{item['role']}: {text_of(item.get('content'))}")
        elif kind == "function_call":
            lines.append(f"call {item.get('name')} {item.get('arguments')}")
        elif kind == "function_call_output":
            lines.append(f"tool {item.get('call_id')} -> {text_of(item.get('output'))}")
        else:
            lines.append(json.dumps(item, ensure_ascii=False, default=str))
    return "\n".join(lines)


def result_of(output: Any) -> Any:
    """A tool's output as the result to report: text that holds a JSON
    object or array is that JSON (an MCP tool answers in text), anything
    else as JSON can carry it."""
    if isinstance(output, dict) and isinstance(output.get("text"), str) and output.get("type") in ("text", "input_text"):
        output = output["text"]
    elif isinstance(output, list) and output and all(
        isinstance(part, dict) and isinstance(part.get("text"), str) for part in output
    ):
        output = "".join(part["text"] for part in output)
    if isinstance(output, str):
        stripped = output.strip()
        if stripped[:1] in ("{", "["):
            try:
                return json.loads(stripped)
            except ValueError:
                pass
        return output
    return json_safe(output)


def arguments_of(raw: Any) -> Any:
    """A call's arguments: its JSON text parsed (``{}`` when empty; the
    text itself when it is not JSON)."""
    text = raw.get("arguments") if isinstance(raw, dict) else getattr(raw, "arguments", None)
    if isinstance(text, str):
        try:
            return json.loads(text) if text.strip() else {}
        except ValueError:
            return text
    return json_safe(text) if text is not None else {}


def failure_of(error: BaseException) -> Optional[TurnFailure]:
    """The typed error a failed run answers with, or ``None`` to let it
    answer ``UnhandledException``. Messages name no turn content."""
    if isinstance(error, TurnFailure):
        return error
    try:
        import openai
    except ImportError:  # pragma: no cover - the SDK depends on it
        openai = None  # type: ignore[assignment]
    if openai is not None and isinstance(error, openai.APIStatusError):
        return TurnFailure("ModelRequestFailed", f"HTTP {error.status_code}")
    if openai is not None and isinstance(error, openai.APIConnectionError):
        return TurnFailure("ModelUnreachable", "the model endpoint could not be reached")
    if isinstance(error, AgentsException):
        return TurnFailure(type(error).__name__, "the agent run failed")
    return None
