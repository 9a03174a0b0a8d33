"""The protocol's lines: reading and writing them, and the messages both the
sync and the asyncio servers exchange."""

from __future__ import annotations

import argparse
import json
import os
from typing import IO, Any, Dict, List, Optional, Tuple, Union

from . import _clock, _exception
from ._records import (
    Feedback,
    PromptRequest,
    ProtocolError,
    ResetRequest,
    ResumeRequest,
    ReviewRequest,
    Role,
    TurnFailure,
    TurnRecord,
)

PROTOCOL_VERSION = 1
"""The protocol version this package speaks."""

DURABLE_DIR_ENV = "AGENT_DURABLE_DIR"
"""The environment variable holding the trial's durable directory."""

Message = Dict[str, Any]
Request = Union[PromptRequest, ResumeRequest, ReviewRequest, ResetRequest]

_UNSET: Any = object()


class Channel:
    """Line-delimited JSON over two binary streams."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self._reader = reader
        self._writer = writer

    def read(self) -> Optional[Message]:
        """The next message, or ``None`` at end of input."""
        while True:
            line = self._reader.readline()
            if not line:
                return None
            if line.strip():
                try:
                    message = json.loads(line)
                except ValueError as error:
                    raise ProtocolError("the harness sent a line that is not JSON") from error
                if not isinstance(message, dict):
                    raise ProtocolError("a protocol line must be a JSON object")
                return message

    @staticmethod
    def encode(message: Message) -> bytes:
        """One message as one line; raises when it holds something that is
        not JSON, before anything is written."""
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        return data.encode("utf-8") + b"\n"

    def send(self, line: bytes) -> None:
        """Writes an encoded line and flushes it."""
        self._writer.write(line)
        self._writer.flush()

    def write(self, message: Message) -> None:
        """Writes one message as one line and flushes it."""
        self.send(self.encode(message))


def durable_dir(argv: Optional[List[str]] = None) -> str:
    """The trial's durable directory, from ``--durable-dir`` or the environment."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--durable-dir", default=os.environ.get(DURABLE_DIR_ENV, ""))
    known, _ = parser.parse_known_args(argv)
    if not known.durable_dir:
        raise ProtocolError("no durable directory was given")
    return str(known.durable_dir)


def accept_hello(hello: Message, argv: Optional[List[str]]) -> str:
    """Checks the handshake, sets the trial's clock offset (see
    :func:`symfonic_evals_protocol.now`) and returns the durable directory
    it names."""
    kind = hello.get("type")
    if kind != "hello":
        # Name what arrived (its type only: a line may carry anything), so a
        # stray line is not mistaken for a version mismatch.
        got = f"a {kind!r} message" if isinstance(kind, str) and kind else "a JSON object without a type"
        raise ProtocolError(f"the first line must be the harness's hello message; got {got}")
    versions = hello.get("protocol_versions")
    if not isinstance(versions, list):
        raise ProtocolError("the hello message has no protocol_versions list")
    if PROTOCOL_VERSION not in versions:
        raise ProtocolError(f"the harness does not offer protocol version {PROTOCOL_VERSION}")
    offset = hello.get("clock_offset_ms", 0)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ProtocolError("clock_offset_ms is a non-negative integer")
    _clock.set_offset_ms(offset)
    return str(hello.get("durable_dir") or durable_dir(argv))


def ready(capabilities: Dict[str, Any]) -> Message:
    """The answer to the handshake."""
    return {"type": "ready", "protocol_version": PROTOCOL_VERSION, "capabilities": capabilities}


def parse_request(message: Message) -> Tuple[int, Request]:
    """A prompt, resume, review or reset message as its request id and request."""
    kind, request_id = message.get("type"), message.get("id")
    if kind not in ("prompt", "resume", "review", "reset") or isinstance(request_id, bool) or not isinstance(request_id, int):
        raise ProtocolError("expected a prompt, resume, review, reset or shutdown message")
    if kind == "reset":
        # Additive in version 1: the conversation sits beside the id.
        conversation = message.get("conversation")
        if not isinstance(conversation, str):
            raise ProtocolError("a reset names its conversation as a string")
        return request_id, ResetRequest(conversation)
    body = message.get("request")
    if not isinstance(body, dict):
        raise ProtocolError("a turn message carries its request as an object")
    try:
        if kind == "prompt":
            feedback = body.get("feedback")
            if feedback not in (None, Feedback.REJECTED):
                raise ProtocolError("a prompt's feedback is rejected, or absent")
            return request_id, PromptRequest(
                body["conversation"], body["prompt"], body.get("state"), body.get("role", Role.USER), feedback
            )
        if kind == "review":
            if body["action"] not in ("approve", "amend", "revoke", "reject"):
                raise ProtocolError("a review's action is approve, amend, revoke or reject")
            return request_id, ReviewRequest(
                body["conversation"],
                body["action"],
                "" if body["action"] == "reject" else body["procedure"],
                body.get("draft"),
                body.get("tool"),
                body.get("precondition"),
            )
        return request_id, ResumeRequest(
            body["conversation"], body["token"], body.get("answer"), body.get("question_id")
        )
    except KeyError as missing:
        raise ProtocolError(f"the {kind} request has no {missing.args[0]}") from None


def is_shutdown(message: Optional[Message]) -> bool:
    """End of input counts as a shutdown, as the protocol asks."""
    return message is None or message.get("type") == "shutdown"


def ledger_apply(request_id: int, key: str, tool: Optional[str] = None, arguments: Any = _UNSET) -> Message:
    """Asks the harness to apply an effect under ``key``, of ``tool``'s call
    when the deployment names it, applied with ``arguments`` when given."""
    if not isinstance(key, str):
        raise TypeError("a ledger key is a string")
    if tool is not None and (not isinstance(tool, str) or not tool):
        raise TypeError("a tool name is a non-empty string")
    message: Message = {"type": "ledger_apply", "id": request_id, "key": key}
    if tool is not None:
        message["tool"] = tool
    if arguments is not _UNSET:
        message["arguments"] = arguments
    return message


def ledger_applied(request_id: int, key: str, reply: Optional[Message]) -> bool:
    """Reads the harness's answer to :func:`ledger_apply`."""
    if reply is None:
        raise ProtocolError("the harness closed the channel during a ledger operation")
    if reply.get("type") != "ledger_result" or reply.get("id") != request_id:
        raise ProtocolError("expected the ledger result for this turn")
    if reply.get("key") != key:
        raise ProtocolError("the ledger result names another key")
    return reply.get("applied") is True


def witness(request_id: int, tool: str, arguments: Any, result: Any, error: Any) -> Message:
    """A tool body's account of one execution: exactly one of ``result``
    (it returned) and ``error`` (it, or the upstream it called, failed)."""
    if not tool:
        raise ValueError("a witness names the tool whose body ran")
    if (result is _UNSET) == (error is _UNSET):
        raise ValueError("a witness gives exactly one of result= or error=")
    if error is not _UNSET:
        if not isinstance(error, str):
            raise TypeError("a witnessed error is text")
        outcome: Message = {"status": "failed", "error": error}
    else:
        outcome = {"status": "succeeded", "result": result}
    return {"type": "witness", "id": request_id, "tool": tool, "arguments": arguments, "outcome": outcome}


def answer(request_id: int, record: TurnRecord) -> Message:
    """The turn's record, checked by its own constructors."""
    if not isinstance(record, TurnRecord):
        raise TypeError("a turn handler returns a TurnRecord")
    return {"type": "turn_record", "id": request_id, "record": record.to_json()}


def failure(request_id: int, error: BaseException, messages: bool = False) -> Message:
    """The typed error a failed turn answers with.

    Anything but a :class:`TurnFailure` answers ``UnhandledException``
    named by its type only: its message may quote turn content, and the
    harness prints kinds in clear. Its ``exception`` is the code half of
    the traceback (type, qualified name, frames; see :func:`_exception.trace`),
    with each message only when ``messages`` is true (the adopter's opt-in).
    A :class:`TurnFailure` raised from, or while handling, another exception
    carries that exception's trace the same way.
    """
    if isinstance(error, TurnFailure):
        body = error.to_json()
        behind = _exception.cause_of(error)
    else:
        body = {"kind": "UnhandledException", "message": type(error).__name__}
        behind = error
    if behind is not None:
        try:
            body["exception"] = _exception.trace(behind, messages=messages)
        except Exception:  # the trace is a courtesy: it must never cost the answer
            pass
    return {"type": "turn_error", "id": request_id, "error": body}
