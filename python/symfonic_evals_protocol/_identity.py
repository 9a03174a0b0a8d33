"""Procedure identities exactly as the harness recomputes them.

The procedural pack reads the procedures a review door publishes
(``{"tool", "precondition", "text"}``), recomputes each one's identity and
requires the review and enforcement ids to be those digests. The harness
frames the digest over the precondition as its JSON library prints it, so
this module prints JSON the same way: compact, keys in the order given,
non-ASCII text as it is, and numbers as the harness spells them (``1e-6``
rather than Python's ``1e-06``, ``0.00001`` rather than ``1e-05``).
"""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from typing import Any

__all__ = ["canonical_json", "procedure_identity"]

_I64_MIN = -(2**63)
_U64_MAX = 2**64 - 1


def _number(value: float) -> str:
    """A float as the harness prints it: shortest round-trip digits, in
    positional notation when the decimal exponent is in -5..15, otherwise
    ``d.ddde±x`` (no padded exponent, ``+`` on positive exponents)."""
    if not math.isfinite(value):
        raise ValueError("JSON has no NaN or infinity")
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0.0:
        return f"{sign}0.0"
    # repr gives the shortest digits that round-trip, as the harness does.
    shortest = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(d) for d in shortest.digits)
    exponent = len(digits) - 1 + int(shortest.exponent)
    if 0 <= exponent < 16:
        integer = digits[: exponent + 1].ljust(exponent + 1, "0")
        return f"{sign}{integer}.{digits[exponent + 1:] or '0'}"
    if -5 <= exponent < 0:
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    shown = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
    return f"{sign}{shown}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


def canonical_json(value: Any) -> str:
    """``value`` as the harness's JSON library prints it compactly.

    Integers outside the 64-bit range are floats to the harness, and are
    printed as such.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if _I64_MIN <= value <= _U64_MAX:
            return str(value)
        return _number(float(value))
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(item) for item in value) + "]"
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError("JSON object keys are strings")
            items.append(json.dumps(key, ensure_ascii=False) + ":" + canonical_json(item))
        return "{" + ",".join(items) + "}"
    raise TypeError(f"{type(value).__name__} is not JSON")


def procedure_identity(tool: str, precondition: Any, text: str) -> str:
    """A procedure's identity digest: hex sha256 over its governed tool, its
    precondition as compact JSON and its text, each behind its length as
    eight little-endian bytes, so no two splits of one text collide.

    Publish the precondition exactly as it is hashed (same key order): the
    harness hashes what it receives.
    """
    digest = hashlib.sha256()
    for part in (tool, canonical_json(precondition), text):
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()
