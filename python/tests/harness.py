"""A scripted harness: feeds a session's lines to a server and returns what
the deployment wrote, each line checked against the committed schema."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from typing import Any, Callable, Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from schema import Schema  # noqa: E402
from symfonic_evals_protocol import serve, serve_async  # noqa: E402

SCHEMA = Schema()

HELLO: Dict[str, Any] = {"type": "hello", "protocol_versions": [1], "durable_dir": "/tmp/t0", "trial": 0}
SHUTDOWN: Dict[str, Any] = {"type": "shutdown"}


def prompt(request_id: int, prompt: str, **fields: Any) -> Dict[str, Any]:
    """A prompt message; ``fields`` adds ``state`` or ``role``."""
    request = {"conversation": "c", "prompt": prompt, **fields}
    return {"type": "prompt", "id": request_id, "request": request}


def resume(request_id: int, token: str, answer: Any, **fields: Any) -> Dict[str, Any]:
    """A resume message; ``fields`` adds ``question_id``."""
    request = {"conversation": "c", "token": token, "answer": answer, **fields}
    return {"type": "resume", "id": request_id, "request": request}


def ledger_result(request_id: int, key: str, applied: bool) -> Dict[str, Any]:
    """The harness's answer to a ledger operation."""
    return {"type": "ledger_result", "id": request_id, "key": key, "applied": applied}


def _streams(lines: List[Dict[str, Any]]) -> "tuple[io.BytesIO, io.BytesIO]":
    for line in lines:
        problem = SCHEMA.validate("harness_message", line)
        assert problem is None, f"the script itself is off the schema: {problem}"
    data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    return io.BytesIO(data), io.BytesIO()


def _written(writer: io.BytesIO) -> List[Dict[str, Any]]:
    out = []
    for raw in writer.getvalue().splitlines():
        message = json.loads(raw)
        problem = SCHEMA.validate("child_message", message)
        assert problem is None, f"{message}: {problem}"
        out.append(message)
    return out


def session(factory: Callable[[str], Any], lines: List[Dict[str, Any]], **options: Any) -> List[Dict[str, Any]]:
    """Runs :func:`serve` over ``lines`` (with ``options``, e.g.
    ``exception_messages``) and returns the child's messages."""
    reader, writer = _streams(lines)
    assert serve(factory, reader=reader, writer=writer, **options) == 0
    return _written(writer)


def async_session(factory: Callable[[str], Any], lines: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Runs :func:`serve_async` on a fresh loop over ``lines``."""
    reader, writer = _streams(lines)
    assert asyncio.run(serve_async(factory, reader=reader, writer=writer)) == 0
    return _written(writer)
