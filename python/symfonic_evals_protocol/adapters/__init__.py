"""Adapters that serve an agent framework's app as a deployment.

- :mod:`symfonic_evals_protocol.adapters.langgraph`: a compiled LangGraph
  graph (``pip install 'symfonic-evals-protocol[langgraph]'``).

Importing this package needs no framework; each adapter module imports its
own. :data:`effects` is how a tool body reaches the harness's ledger and
witness while an adapter runs its turn; :func:`require_approval` is the
strict answer check for an approve/deny question. The shared machinery
(durable pause tokens, retry detection, call ids) is in
:mod:`symfonic_evals_protocol.adapters._common`.
"""

from ._common import Effects, effects, require_approval

__all__ = ["Effects", "effects", "require_approval"]
