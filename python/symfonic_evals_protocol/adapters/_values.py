"""Values the adapters report and compare: JSON-safe copies of what a
framework holds, and the digest that tells a client's retry of a request
from a new one."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Dict, Union

from .._identity import canonical_json
from .._records import PromptRequest, ResumeRequest

__all__ = [
    "json_safe",
    "request_digest",
]

# -- values ------------------------------------------------------------------


def json_safe(value: Any) -> Any:
    """``value`` as JSON the protocol can carry: objects with a
    ``model_dump`` (pydantic) or ``dict`` method are dumped, anything else
    unknown becomes its ``str``."""

    def default(thing: Any) -> Any:
        for method in ("model_dump", "dict"):
            dump = getattr(thing, method, None)
            if callable(dump):
                try:
                    return dump()
                except TypeError:
                    continue
        return str(thing)

    return json.loads(json.dumps(value, default=default, ensure_ascii=False, allow_nan=False))


def request_digest(request: Union[PromptRequest, ResumeRequest]) -> str:
    """A digest naming a request by everything it says, so the same request
    sent again (a client's retry) has the same digest and a different one
    does not."""
    if isinstance(request, PromptRequest):
        body: Dict[str, Any] = {
            "kind": "prompt",
            "conversation": request.conversation,
            "prompt": request.prompt,
            "state": request.state,
            "role": request.role,
        }
        if request.feedback is not None:
            # A rejected demonstration is another request than the same
            # words unmarked (named only when present, so the digests of
            # ordinary turns stay as they were).
            body["feedback"] = request.feedback
    else:
        body = {
            "kind": "resume",
            "conversation": request.conversation,
            "token": request.token,
            "answer": request.answer,
            "question_id": request.question_id,
        }
    return hashlib.sha256(canonical_json(json_safe(body)).encode("utf-8")).hexdigest()
