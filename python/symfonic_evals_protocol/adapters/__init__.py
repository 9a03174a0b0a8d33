"""Adapters that serve an agent framework's app as a deployment.

- :mod:`symfonic_evals_protocol.adapters.langgraph`: a compiled LangGraph
  graph (``pip install 'symfonic-evals-protocol[langgraph]'``).
- :mod:`symfonic_evals_protocol.adapters.openai_agents`: an OpenAI Agents
  SDK agent (``[openai-agents]``).
- :mod:`symfonic_evals_protocol.adapters.pydantic_ai`: a Pydantic AI agent
  (``[pydantic-ai]``).
- :mod:`symfonic_evals_protocol.adapters.google_adk`: a Google Agent
  Development Kit agent (``[google-adk]``).

Importing this package needs no framework; each adapter module imports its
own. :data:`effects` is how a tool body reaches the harness's ledger and
witness while an adapter runs its turn; :func:`require_approval` is the
strict answer check for an approve/deny question; :class:`TokenCodec`
(:mod:`.tokens`) shapes the pause tokens a desk hands out. A governance
gate in the app reports what it decided with :func:`refusal` and
:func:`admitted` (:mod:`._gate`; the LangGraph adapter's own
:func:`~.langgraph.refusal` answers with a ``ToolMessage`` instead). The shared machinery
(durable pause tokens, retry detection, call ids) is in
:mod:`symfonic_evals_protocol.adapters._common`.
"""

from ._common import Effects, effects, require_approval
from ._gate import admitted, refusal
from .tokens import SignedTokenCodec, TokenCodec

__all__ = ["Effects", "SignedTokenCodec", "TokenCodec", "admitted", "effects", "refusal", "require_approval"]
