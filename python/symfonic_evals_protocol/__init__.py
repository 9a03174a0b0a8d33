"""Speak the symfonic-evals process protocol from a Python deployment.

The Rust harness starts the deployment as a child process and exchanges one
JSON object per line over its stdin and stdout (``protocol/README.md`` in the
symfonic-evals repository). This package is that conversation, so a
deployment only describes what it did:

    class HelpDesk(Deployment):
        def capabilities(self) -> Capabilities:
            return Capabilities().capability("tools")

        def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
            if turn.ledger_apply("refund:3"):
                ...  # perform the effect exactly once
            return TurnRecord(answer="done")

    if __name__ == "__main__":
        sys.exit(serve(HelpDesk))

Deployments built on asyncio subclass :class:`AsyncDeployment` instead and
write ``async def run_turn(...)`` with ``await turn.ledger_apply(key)`` and
``await turn.witness(...)``; :func:`serve` runs them on an event loop.

:mod:`symfonic_evals_protocol.predicates` evaluates the state predicates of
approved procedures exactly as the harness does, so a Python gate needs no
second copy of the rules.

:func:`mcp_server_params` locates the harness's MCP fixture (the server of
the extension pack's tool) in the shapes common MCP clients take.

:func:`now` is the time on the trial's clock, which the harness may move
forward between a crash and the retry; read the time there (and declare the
``context-clock`` trait) when anything derives from it.

Standard library only. While :func:`serve` runs, ``sys.stdout`` points at
stderr, so a stray ``print`` cannot corrupt the protocol stream.
"""

from . import predicates
from ._async import AsyncDeployment, AsyncTurn, serve_async
from ._clock import now
from ._identity import canonical_json, procedure_identity
from ._mcp import MCP_FIXTURE, MCP_URL_ENV, mcp_server_params, mcp_url
from ._records import (
    CONCURRENT_PAUSES,
    EDITABLE_CALLS,
    Approvers,
    Capabilities,
    Feedback,
    Pause,
    PromptRequest,
    ProtocolError,
    ResetRequest,
    ResolvedCall,
    ResumeRequest,
    ReviewRequest,
    Role,
    Stage,
    ToolCall,
    TurnFailure,
    TurnRecord,
    edit_decisions,
)
from ._staged import Staged, staged
from ._sync import Deployment, Turn, serve
from ._wire import DURABLE_DIR_ENV, PROTOCOL_VERSION, durable_dir

__version__ = "0.1.0"

__all__ = [
    "MCP_FIXTURE",
    "MCP_URL_ENV",
    "mcp_server_params",
    "mcp_url",
    "PROTOCOL_VERSION",
    "DURABLE_DIR_ENV",
    "Role",
    "CONCURRENT_PAUSES",
    "EDITABLE_CALLS",
    "edit_decisions",
    "Capabilities",
    "Pause",
    "Approvers",
    "ToolCall",
    "ResolvedCall",
    "Stage",
    "TurnRecord",
    "TurnFailure",
    "Feedback",
    "PromptRequest",
    "ResumeRequest",
    "ResetRequest",
    "ReviewRequest",
    "Turn",
    "Deployment",
    "AsyncTurn",
    "AsyncDeployment",
    "ProtocolError",
    "canonical_json",
    "procedure_identity",
    "predicates",
    "durable_dir",
    "now",
    "serve",
    "Staged",
    "staged",
    "serve_async",
]
