"""Honest variants: correct-but-unusual configurations of the desk.

Each is a shape real deployments take; the packs must pass every one of
them as they pass the reference. ``--variant NAME`` starts one; each switch
sits on the line where the variation lives (search for ``self.is_variant(``).
The Rust side declares the same names, with the packs each is meant for
(``examples/helpdesk/src/honest/mod.rs``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from typing import Any, Dict, List, Optional

VARIANTS = {
    "jwt-pause-tokens": "pause tokens are HS256 JWTs under a per-desk secret, verified before any lookup",
    "random-call-ids": "call ids are random uuids, not drawn from a counter",
    "looks-up-before-acting": "the ticket is looked up (read-only) before the person is asked",
    "outbox-as-json-lines": "effects are recorded as JSON lines in a file, not as table rows",
    "defaulted-tool-argument": "the weather lookup carries units=metric, the body's default",
    "extra-system-message": "the model input carries a second system message",
    "notice-at-pause": "pausing for a person also posts a change notice (an effect of post_notice)",
    "notify-on-denial": "a declined escalation notifies the requester (an effect of notify_requester)",
    "approval-on-the-call": "the escalation is held for a person as the call itself: approved, amended (its priority), edited or rejected",
    "notice-on-governed-calls": "every governed call is announced on the desk's channel: a post_notice effect under its own key when the escalation is held for a person, and another when it runs",
    "invoice-before-cancelling": "the approved escalation applies two effects in one turn: the supervisor's brief (brief_supervisor, its own key) first, the escalation second",
    "same-key-retries": "every effect is delivered twice under its key, the second refused as a duplicate",
    "time-ordered-pause-tokens": "pause tokens are ULIDs: a millisecond timestamp, then 80 random bits, in Crockford's base 32",
    "rejected-as-guardrail": "a demonstration a reviewer rejected is kept as a guardrail row the review door lists, governing nothing and never recalled",
    "reset-is-new-session": "a reset opens a new session for the conversation instead of deleting anything: pauses stay on file under their session, and a token redeems only in its conversation's current session",
    "running-totals": "each lesson's total is kept in the store and added to as turns arrive; a lesson is promoted when its total reaches the threshold",
    "gated-alias-tool": "an express refund reaches the refund's effect under the same key, and the gate judges it under the refund's procedures",
    "logs-refund-requests": "a refund the gate refused is still logged as requested (an effect of log_refund_request under refund:<order>:requested, next to the refund's key)",
    "asks-again-after-restart": "requests a person approved and the desk carried out are remembered per conversation in memory only and answered again as already done; after a restart the same request asks the person again",
    "ascii-escaped-results": "results reach the model as json.dumps writes them by default (non-ASCII as \\u escapes); forecasts carry a degree sign",
}

TONE = "system: write plainly; never guess a forecast"
"""The second system message of ``extra-system-message``."""

SECRET_FILE = "pause-token.key"
OUTBOX_FILE = "outbox.jsonl"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> Optional[bytes]:
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        return None
    # One spelling per byte string: unused bits set, or any character
    # outside the alphabet, is not this encoding.
    return raw if _b64(raw) == text else None


CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid() -> str:
    """A ULID: 48 bits of milliseconds since the epoch, then 80 random bits
    from the operating system, 26 characters of Crockford's base 32. Two
    issued in one millisecond share their first ten characters."""
    value = (int(time.time() * 1000) << 80) | secrets.randbits(80)
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


class Signer:
    """Signs and verifies HS256 tokens under the secret kept in the durable
    directory, created on first use, so a restarted desk verifies what it
    issued before."""

    def __init__(self, durable_dir: str) -> None:
        path = os.path.join(durable_dir, SECRET_FILE)
        try:
            with open(path, "x") as created:
                created.write(secrets.token_hex(32))
        except FileExistsError:
            pass
        with open(path) as existing:
            self._secret = existing.read().encode("ascii")

    def issue(self, claims: Dict[str, Any]) -> str:
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        signed = f"{header}.{payload}"
        return f"{signed}.{_b64(hmac.new(self._secret, signed.encode(), hashlib.sha256).digest())}"

    def verify(self, token: str) -> Optional[Dict[str, Any]]:
        """The claims of a token this desk signed; ``None`` otherwise."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        header, payload, signature = parts
        given = _unb64(signature)
        expected = hmac.new(self._secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        if given is None or not hmac.compare_digest(given, expected):
            return None
        decoded_header, decoded_payload = _unb64(header), _unb64(payload)
        if decoded_header is None or decoded_payload is None:
            return None
        try:
            if json.loads(decoded_header).get("alg") != "HS256":
                return None
            claims = json.loads(decoded_payload)
        except ValueError:
            return None
        return claims if isinstance(claims, dict) else None


class JsonLinesOutbox:
    """Effects as one JSON line each, deduplicated under their key."""

    def __init__(self, durable_dir: str) -> None:
        self._path = os.path.join(durable_dir, OUTBOX_FILE)

    def _keys(self) -> List[str]:
        try:
            with open(self._path) as lines:
                return [json.loads(line)["key"] for line in lines if line.strip()]
        except FileNotFoundError:
            return []

    def record(self, key: str, payload: Dict[str, Any]) -> None:
        """Appends the effect unless its key is already written; one write
        per line, flushed to disk before the turn answers."""
        if key in self._keys():
            return
        with open(self._path, "a") as out:
            out.write(json.dumps({"key": key, "payload": payload}) + "\n")
            out.flush()
            os.fsync(out.fileno())
