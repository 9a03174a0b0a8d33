"""The trial's clock: the real time plus the offset the harness's handshake
carries. A deployment that derives anything from the time (a key from the
current hour, an expiry) reads it here and declares the ``context-clock``
trait, so the harness can move the clock forward between a crash and the
retry, as a long outage would."""

from __future__ import annotations

import time

_offset_ms = 0


def set_offset_ms(offset_ms: int) -> None:
    """Set by the handshake; a deployment never calls it."""
    global _offset_ms
    _offset_ms = offset_ms


def now() -> float:
    """Seconds since the epoch, as :func:`time.time` gives them, on the
    trial's clock."""
    return time.time() + _offset_ms / 1000.0
