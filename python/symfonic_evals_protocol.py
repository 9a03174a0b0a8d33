"""Speak the symfonic-evals process protocol from a Python deployment.

The Rust harness starts the deployment as a child process and exchanges one
JSON object per line over its stdin and stdout (see ``protocol/README.md``).
This module is that conversation, so a deployment only describes what it did:

    class HelpDesk(Deployment):
        def capabilities(self) -> Capabilities:
            return Capabilities().capability("tools")

        def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
            if turn.ledger_apply("refund:3"):
                ...  # perform the effect exactly once
            return TurnRecord(answer="done")

    if __name__ == "__main__":
        serve(HelpDesk)

Standard library only. While :func:`serve` runs, ``sys.stdout`` points at
stderr, so a stray ``print`` cannot corrupt the protocol stream.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Dict, List, Optional

PROTOCOL_VERSION = 1
"""The protocol version this module speaks."""

DURABLE_DIR_ENV = "SYMFONIC_EVALS_DURABLE_DIR"
"""The environment variable holding the trial's durable directory."""

__all__ = [
    "PROTOCOL_VERSION",
    "DURABLE_DIR_ENV",
    "Capabilities",
    "Pause",
    "ToolCall",
    "Stage",
    "TurnRecord",
    "TurnFailure",
    "PromptRequest",
    "ResumeRequest",
    "Turn",
    "Deployment",
    "ProtocolError",
    "durable_dir",
    "serve",
]


class ProtocolError(Exception):
    """The harness sent something this module cannot answer."""


class TurnFailure(Exception):
    """Raise from a turn to report a typed error the pack may expect.

    ``kind`` is compared exactly with a step's expected error (for example
    ``PauseTokenReplayedError``); ``message`` is for people.
    """

    def __init__(self, kind: str, message: str = "") -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


class Capabilities:
    """What the deployment declares it can do (the handshake's evidence)."""

    def __init__(self) -> None:
        self.capabilities: set[str] = set()
        self.traits: set[str] = set()
        self.operations: set[str] = set()
        self.contributed_tools: Dict[str, set[str]] = {}

    def capability(self, name: str) -> "Capabilities":
        """Declare a capability such as ``tools``, ``human`` or ``extensions``."""
        self.capabilities.add(name)
        return self

    def with_trait(self, name: str) -> "Capabilities":
        """Declare a trait such as ``procedural-precondition``."""
        self.traits.add(name)
        return self

    def operation(self, name: str) -> "Capabilities":
        """Declare an operation beyond a prompt, such as ``resume``."""
        self.operations.add(name)
        return self

    def contributes(self, capability: str, tool: str) -> "Capabilities":
        """Declare that ``capability`` contributes ``tool`` (and the capability)."""
        self.capabilities.add(capability)
        self.contributed_tools.setdefault(capability, set()).add(tool)
        return self

    def to_json(self) -> Dict[str, Any]:
        """The wire form: sorted lists, like the Rust evidence model."""
        return {
            "capabilities": sorted(self.capabilities),
            "traits": sorted(self.traits),
            "operations": sorted(self.operations),
            "contributed_tools": {
                name: sorted(tools) for name, tools in sorted(self.contributed_tools.items())
            },
        }


@dataclass(frozen=True)
class Pause:
    """A turn that stopped for a person, redeemable with ``token``."""

    interaction: str
    resumable: bool
    token: str


@dataclass(frozen=True)
class ToolCall:
    """One tool call and how it ended: ``succeeded``, ``failed`` or ``refused``."""

    id: str
    name: str
    arguments: Any
    status: str
    detail: Any = None

    @classmethod
    def succeeded(cls, id: str, name: str, arguments: Any, result: Any) -> "ToolCall":
        """A call that ran and returned ``result``."""
        return cls(id, name, arguments, "succeeded", result)

    @classmethod
    def failed(cls, id: str, name: str, arguments: Any, error: str) -> "ToolCall":
        """A call that ran and raised ``error``."""
        return cls(id, name, arguments, "failed", error)

    @classmethod
    def refused(cls, id: str, name: str, arguments: Any, stage: str) -> "ToolCall":
        """A call that governance ``stage`` refused before it ran."""
        return cls(id, name, arguments, "refused", stage)

    def to_json(self) -> Dict[str, Any]:
        """The wire form of the call."""
        key = {"succeeded": "result", "failed": "error", "refused": "stage"}[self.status]
        outcome: Dict[str, Any] = {"status": self.status, key: self.detail}
        return {"id": self.id, "name": self.name, "arguments": self.arguments, "outcome": outcome}


@dataclass
class Stage:
    """One governance stage's answer: ``passed``, ``rejected``, ``abstained``,
    ``broken`` or ``downgraded``, with named counts such as ``checked``."""

    stage: str
    outcome: str
    counts: Dict[str, int] = field(default_factory=dict)

    def to_json(self) -> Dict[str, Any]:
        """The wire form of the stage answer."""
        return {"stage": self.stage, "outcome": self.outcome, "counts": dict(self.counts)}


@dataclass
class TurnRecord:
    """The evidence one turn left behind, in the harness's evidence shape.

    ``attributes`` hold values the deployment read back out of its own store;
    pause facts come from ``pause``, never from an attribute.
    """

    answer: str = ""
    model_input: str = ""
    pause: Optional[Pause] = None
    tool_calls: List[ToolCall] = field(default_factory=list)
    governance: List[Stage] = field(default_factory=list)
    attributes: Dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> Dict[str, Any]:
        """The wire form of the record."""
        terminal: Dict[str, Any] = {"kind": "completed"}
        if self.pause is not None:
            terminal = {
                "kind": "paused",
                "interaction": self.pause.interaction,
                "resumable": self.pause.resumable,
                "token": self.pause.token,
            }
        return {
            "answer": self.answer,
            "terminal": terminal,
            "tool_calls": [call.to_json() for call in self.tool_calls],
            "model_input": self.model_input,
            "governance": [stage.to_json() for stage in self.governance],
            "attributes": dict(self.attributes),
        }


@dataclass(frozen=True)
class PromptRequest:
    """A prompt turn: conversation, prompt text, and explicit state if any."""

    conversation: str
    prompt: str
    state: Optional[Dict[str, Any]] = None


@dataclass(frozen=True)
class ResumeRequest:
    """A redemption of a conversation's latest pause with a person's answer."""

    conversation: str
    token: str
    answer: Any


class Turn:
    """The harness's side of one request, available while a turn runs."""

    def __init__(self, request_id: int, channel: "_Channel") -> None:
        self._id = request_id
        self._channel = channel

    def ledger_apply(self, key: str) -> bool:
        """Record an effect under ``key`` in the harness's side-effect ledger.

        Returns ``True`` when the key is new and the caller must now perform
        the effect, ``False`` when it was applied before. The harness owns the
        ledger, so its counts are what the pack reads, whatever we claim.
        """
        self._channel.write({"type": "ledger_apply", "id": self._id, "key": key})
        reply = self._channel.read()
        if reply is None:
            raise ProtocolError("the harness closed the channel during a ledger operation")
        if reply.get("type") != "ledger_result" or reply.get("id") != self._id:
            raise ProtocolError("expected the ledger result for this turn")
        return bool(reply.get("applied"))


class Deployment:
    """Subclass and override: the deployment the harness evaluates.

    One instance lives for one process; the harness restarts the process to
    test what survives, so durable facts belong under :attr:`durable_dir`.
    """

    def __init__(self, durable_dir: str) -> None:
        self.durable_dir = durable_dir

    def capabilities(self) -> Capabilities:
        """The evidence sent in the handshake."""
        return Capabilities()

    def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
        """Run one prompt turn; raise :class:`TurnFailure` for a typed error."""
        raise TurnFailure("NotImplemented", "this deployment runs no prompt turns")

    def resume(self, request: ResumeRequest, turn: Turn) -> TurnRecord:
        """Redeem a pause; raise :class:`TurnFailure` for a typed error."""
        raise TurnFailure("ResumeUnsupported", "this deployment declares no resume operation")

    def close(self) -> None:
        """Called once at orderly shutdown."""


class _Channel:
    """Line-delimited JSON over two binary streams."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self._reader = reader
        self._writer = writer

    def read(self) -> Optional[Dict[str, Any]]:
        while True:
            line = self._reader.readline()
            if not line:
                return None
            if line.strip():
                message = json.loads(line)
                if not isinstance(message, dict):
                    raise ProtocolError("a protocol line must be a JSON object")
                return message

    def write(self, message: Dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        self._writer.write(data.encode("utf-8") + b"\n")
        self._writer.flush()


def durable_dir(argv: Optional[List[str]] = None) -> str:
    """The trial's durable directory, from ``--durable-dir`` or the environment."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--durable-dir", default=os.environ.get(DURABLE_DIR_ENV, ""))
    known, _ = parser.parse_known_args(argv)
    if not known.durable_dir:
        raise ProtocolError("no durable directory was given")
    return str(known.durable_dir)


def _error(request_id: int, kind: str, message: str) -> Dict[str, Any]:
    return {"type": "turn_error", "id": request_id, "error": {"kind": kind, "message": message}}


def serve(
    factory: Callable[[str], Deployment],
    *,
    argv: Optional[List[str]] = None,
    reader: Optional[IO[bytes]] = None,
    writer: Optional[IO[bytes]] = None,
) -> int:
    """Run the protocol until shutdown or end of input; returns an exit code.

    ``factory`` builds the deployment from the durable directory. A turn
    that raises :class:`TurnFailure` answers with that typed error; any other
    exception answers ``UnhandledException`` naming only the exception's type
    (its message may quote turn content), and the process keeps serving.
    """
    out = writer if writer is not None else sys.stdout.buffer
    channel = _Channel(reader if reader is not None else sys.stdin.buffer, out)
    if writer is None:
        sys.stdout = sys.stderr
    hello = channel.read()
    if hello is None:
        return 0
    if hello.get("type") != "hello" or PROTOCOL_VERSION not in hello.get("protocol_versions", []):
        raise ProtocolError("the harness does not offer protocol version 1")
    deployment = factory(str(hello.get("durable_dir") or durable_dir(argv)))
    channel.write(
        {
            "type": "ready",
            "protocol_version": PROTOCOL_VERSION,
            "capabilities": deployment.capabilities().to_json(),
        }
    )
    while True:
        message = channel.read()
        if message is None or message.get("type") == "shutdown":
            deployment.close()
            return 0
        kind, request_id = message.get("type"), message.get("id")
        if kind not in ("prompt", "resume") or not isinstance(request_id, int):
            raise ProtocolError("expected a prompt, resume or shutdown message")
        body = message.get("request") or {}
        turn = Turn(request_id, channel)
        try:
            if kind == "prompt":
                record = deployment.run_turn(
                    PromptRequest(body["conversation"], body["prompt"], body.get("state")), turn
                )
            else:
                record = deployment.resume(
                    ResumeRequest(body["conversation"], body["token"], body.get("answer")), turn
                )
            reply = {"type": "turn_record", "id": request_id, "record": record.to_json()}
        except TurnFailure as failure:
            reply = _error(request_id, failure.kind, failure.message)
        except ProtocolError:
            raise
        except Exception as error:  # a broken turn must not end the session
            reply = _error(request_id, "UnhandledException", type(error).__name__)
        channel.write(reply)
