"""Serve a compiled LangGraph graph (LangGraph 1.x) as a deployment.

::

    from symfonic_evals_protocol import serve
    from symfonic_evals_protocol.adapters.langgraph import LangGraphDeployment

    serve(lambda durable_dir: LangGraphDeployment(durable_dir, builder.compile()))

What the adapter does with the graph:

- **Threads.** The protocol's conversation is the ``thread_id``, unless a
  subclass's ``thread_config`` maps it to a thread id of its own. A graph
  compiled without a checkpointer gets a ``SqliteSaver``
  (``langgraph-checkpoint-sqlite``) on a file under the trial's durable
  directory, so its checkpoints survive a restart; one compiled with its
  own checkpointer keeps it (an in-memory one is warned about on stderr).
- **Prompts.** A prompt runs the graph with ``{"messages": [HumanMessage(prompt)]}``
  (``make_input`` changes that). A client's retry of the same prompt after
  the process died mid-turn (or after the turn raised) continues from the
  thread's checkpoint with ``invoke(None)`` instead of sending the message
  again.
- **Evidence.** Tool calls are read off the messages the turn added
  (``AIMessage.tool_calls``, and the ``ToolMessage`` answering each:
  ``status="success"`` is a success with the content, parsed as JSON when
  it is JSON, ``"error"`` a failure). Call ids are the model's, made unique
  across the trial when a replayed model repeats one. The model input is
  every prompt the graph's chat models received in the turn, recorded by a
  callback handler and rendered one message a line.
- **Pauses.** A run that stops on ``interrupt()`` pauses: the adapter mints
  a random token, keeps it in its own durable table bound to the
  conversation, the question id (``q-<interrupt id>``) and the interrupt,
  and reports the interrupt's value as the question. The calls of the last
  model message still without an answer are reported pending (an
  ``interrupt()`` inside a tool, or in a review node before the tool node,
  parks them; one inside a subgraph parks the calls of the subgraph's
  messages, which its parent sees only once it finishes); the pause's
  interaction is the first such call's tool, or else the interrupted node.
  Several interrupts waiting at once (a ``Send`` fan-out, ``create_agent``'s
  tool node running each call as its own task) are one pause, resumed
  with one ``Command`` answering them all (:mod:`._langgraph_review`).
- **Approvers.** An interrupt whose payload names who may answer it
  (``interrupt({"question": ..., "approvers": ["duty-supervisor", owner]})``),
  or a deployment given ``approvers=``, publishes them on the pause; a
  resume whose answer names anyone else in ``approver_field``
  (``{"approved": true, "approver": "someone"}``) is refused
  ``ApproverNotEntitled``/``approver.not_entitled`` before the graph runs,
  the token left redeemable, and an entitled name is taken out of the
  answer before ``validate_answer`` and the ``Command`` see it
  (:mod:`._approvers`).
- **Static breakpoints.** A run that stops at ``interrupt_before`` /
  ``interrupt_after`` pauses too, holding the model's unanswered calls; an
  approval runs on, a rejection answers the held calls with rejected tool
  messages in the place of the node that would have run them.
- **Human-in-the-loop middleware.** A graph built with LangChain's
  ``HumanInTheLoopMiddleware`` (``create_agent(..., middleware=[...])``)
  declares the ``editable-calls`` trait: a pause on its batched request
  (``action_requests`` and ``review_configs``) names editable each parked
  call whose review allows ``edit``, and a resume takes the edit answer
  (``{"decisions": [...]}``, one per parked call; the adapter hands the
  middleware the decisions of the calls it reviews; in ``per_call`` mode,
  each call's interrupt its own decision). A call the resume ran
  is resolved with the arguments it ran with, the middleware's record of a
  reviewer's edit (``hitl_edited_tool_calls``) when there is one, since the
  model's message keeps the arguments it asked for, and with the tool's
  own result (the notice of the edit the middleware prepends to its
  message is for the model); a call the reviewer rejected is refused by
  ``human-review``, not failed. In ``per_call`` mode
  a call is editable when its interrupt's ``response_schema`` allows
  ``edit``, and an edited call is resolved with the arguments handed over
  (the middleware keeps no record of them in that mode).
- **Resumes.** A resume is refused, before the graph runs, when the token
  is unknown, of another conversation, presented with another question
  id, already redeemed, or stale (the thread no longer waits on that
  interrupt), with the reference desk's kinds and codes
  (``PauseTokenReplayedError``/``pause.replayed``, ...;
  ``StalePauseToken``/``pause.stale``), and when ``validate_answer``
  rejects the answer. LangGraph alone accepts a second
  ``Command(resume=...)`` for an answered interrupt without complaint.
  Then ``Command(resume={interrupt_id: answer, ...})``; the parked calls are
  reported ``resolved`` from their ``ToolMessage``. The token is spent once
  the continuation is done: a retry after a crash inside it continues from
  the checkpoint, and a replay after it is refused.
- **Effects.** Tool bodies apply effects through the harness's ledger with
  :data:`~symfonic_evals_protocol.adapters.effects` (``effects.apply(key,
  tool=...)``, ``effects.witness(...)``, ``@effects.witnessed``), bound to
  the running turn. LangGraph runs a node again from its start when it
  resumes, so an effect before ``interrupt()`` in the same node happens
  twice unless its key names the request.

- **Procedures.** A desk that learns and gates procedures fills in three
  hooks (see :class:`LangGraphDeployment`): ``operator`` answers an
  operator's turn (the graph never sees it), ``review`` carries out the
  structured review door on the adopter's procedure store, and
  ``attributes_of`` publishes that store's evidence on every record. A
  gate node answers a call it refuses with :func:`refusal` (reported
  ``refused`` by its stage, e.g. ``procedural_precondition``, with the
  stage's governance entry, not ``failed``) and records a call it admits
  with :func:`admitted`.

Async graphs: :class:`AsyncLangGraphDeployment` serves a graph whose
nodes or tools are coroutines (``ainvoke``, or ``astream`` drained with
``streaming=True``) as an ``AsyncDeployment``, with the same arguments
(:mod:`._langgraph_async`).

Attributes: ``langgraph_checkpoint_id`` (the thread's checkpoint after the
turn; the protocol has no field of its own for it), and on a resume
``resume_outcome``, ``resume_name``, ``resume_checkpoint`` (the pause's
checkpoint is in the checkpointer) and ``resume_continued`` (the thread
went on from it), which the approval pack reads.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional

try:
    from langchain_core.messages import BaseMessage, HumanMessage
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.errors import GraphBubbleUp
    from langgraph.graph import StateGraph
    from langgraph.types import Command
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the LangGraph adapter needs LangGraph: pip install 'symfonic-evals-protocol[langgraph]'"
    ) from missing

from .._records import EDITABLE_CALLS, Capabilities, PromptRequest, ResumeRequest, ReviewRequest, TurnRecord
from .._sync import Deployment, Turn
from ._common import bound_turn, effects, request_digest
from ._langgraph_evidence import GraphEvidence
from ._langgraph_gate import Trace, admitted, refusal, traced
from ._langgraph_pauses import GraphPauses
from ._langgraph_review import HITL_NODE, executed_edits
from ._langgraph_thread import ModelInputRecorder, render_messages
from ._langgraph_thread import baseline as _baseline
from ._langgraph_thread import checkpoint_id as _checkpoint_id
from ._approvers import DEFAULT_APPROVER_FIELD, ApproversOf
from ._pausing import ENFORCEMENT_ATTRIBUTE, PausingDeployment
from .tokens import TokenCodec

__all__ = [
    "AsyncLangGraphDeployment",
    "CHECKPOINT_FILE",
    "LangGraphDeployment",
    "ENFORCEMENT_ATTRIBUTE",
    "ModelInputRecorder",
    "admitted",
    "default_capabilities",
    "deployment",
    "refusal",
    "render_messages",
]

CHECKPOINT_FILE = "langgraph-checkpoints.sqlite3"
"""The SQLite checkpointer's file in the durable directory."""

effects.pass_through(GraphBubbleUp)


def default_capabilities() -> Capabilities:
    """What the adapter itself gives a graph: ``tools``, ``human`` with the
    ``resume`` operation, and ``idempotent-effects`` (effects go through the
    ledger by key). Add what the graph contributes, e.g.
    ``.contributes("extensions", "weather_lookup")``."""
    return (
        Capabilities()
        .capability("tools")
        .capability("human")
        .operation("resume")
        .with_trait("idempotent-effects")
    )


class LangGraphDeployment(GraphEvidence, GraphPauses, PausingDeployment, Deployment):
    """A compiled LangGraph graph (or a ``StateGraph`` to compile) as a
    deployment.

    ``capabilities`` defaults to :func:`default_capabilities`, with each
    of ``extension_tools`` contributed by ``extensions`` and each of
    ``traits`` declared (``procedural-precondition`` and
    ``procedural-review`` for a desk that gates calls on reviewed
    procedures), as the Agents SDK adapter takes them. ``validate_answer(answer)`` raises :class:`TurnFailure` for an answer a
    resume must refuse before spending its token (e.g.
    :func:`~symfonic_evals_protocol.adapters.require_approval`).
    ``make_input(request)`` is the graph input for a prompt (default: the
    prompt as a human message). ``config`` is merged into every run's
    config (``recursion_limit``, more ``configurable`` keys).
    ``answer_of(values, new_messages)`` words the turn's answer (default:
    the text of the turn's last model message). ``durability`` is passed to
    every ``invoke``: ``"sync"`` (the default here; LangGraph's own is
    ``"async"``) writes each step's checkpoint before the next step starts,
    so a process killed mid-step loses no finished step; ``None`` leaves
    LangGraph's default. ``token_codec`` turns the pauses' keys into the
    tokens handed out (:class:`~symfonic_evals_protocol.adapters.tokens.TokenCodec`;
    default: opaque random tokens).

    The procedural seams (:mod:`._langgraph_gate` for the gate node):
    ``operator(request)`` runs an operator's turn (``role: operator``)
    instead of the graph, which never sees it, and returns its answer;
    without it an operator turn is refused (``operator.unsupported``).
    ``review(request)`` carries out the structured review door's
    :class:`~symfonic_evals_protocol.ReviewRequest` on the adopter's own
    procedure store (raising :class:`TurnFailure` ``NoSuchDraft`` /
    ``NoSuchProcedure``), and declares the ``review`` operation.
    ``attributes_of(request)`` is what every record carries besides
    (prompt, resume, operator and review turns alike): the review door's
    listing, the promoted count, read from the adopter's store after the
    turn. With ``operator`` or ``review``, each prompt and resume turn
    publishes the procedures its gates read under
    :data:`ENFORCEMENT_ATTRIBUTE`.

    ``approvers`` names who may answer a pause (a list of names, or a
    function of the held calls returning them) where the interrupt's
    payload names nobody (``{"approvers": [...]}``, which wins): each
    pause publishes them, and an answer whose ``approver_field``
    (``"approver"``) names anyone else is refused ``approver.not_entitled``
    before the graph runs, its token left redeemable (:mod:`._approvers`;
    override :meth:`entitled` to decide otherwise).

    The adapter keeps its own objects in private names; :attr:`graph` is
    the compiled graph it runs, read-only. The pause bookkeeping on the
    thread's checkpoints is :mod:`._langgraph_pauses` (``admit``,
    ``resume_answers``), the turn's evidence :mod:`._langgraph_evidence`
    (``answer_of``), what every adapter shares :mod:`._pausing`.
    """

    def __init__(
        self,
        durable_dir: str,
        graph: Any,
        *,
        capabilities: Optional[Capabilities] = None,
        validate_answer: Optional[Callable[[Any], None]] = None,
        make_input: Optional[Callable[[PromptRequest], Any]] = None,
        config: Optional[Dict[str, Any]] = None,
        answer_of: Optional[Callable[[Any, List[BaseMessage]], str]] = None,
        durability: Optional[str] = "sync",
        extension_tools: Iterable[str] = (),
        traits: Iterable[str] = (),
        token_codec: Optional[TokenCodec] = None,
        operator: Optional[Callable[[PromptRequest], str]] = None,
        review: Optional[Callable[[ReviewRequest], None]] = None,
        attributes_of: Optional[Callable[[Any], Mapping[str, Any]]] = None,
        approvers: Optional[ApproversOf] = None,
        approver_field: str = DEFAULT_APPROVER_FIELD,
    ) -> None:
        super().__init__(durable_dir)
        self._pausing(
            durable_dir,
            token_codec=token_codec,
            capabilities=capabilities,
            extension_tools=extension_tools,
            traits=traits,
            operator=operator,
            review=review,
            attributes_of=attributes_of,
            approvers=approvers,
            approver_field=approver_field,
        )
        self._connection: Optional[sqlite3.Connection] = None
        self._graph = self._attach(graph)
        self._validate_answer = validate_answer
        self._make_input = make_input
        self._config = dict(config or {})
        self._answer_of = answer_of
        self._durability = durability
        # The event loop an asynchronous turn runs on (see AsyncLangGraphDeployment).
        self._turn_loop: Optional[asyncio.AbstractEventLoop] = None

    @property
    def graph(self) -> Any:
        """The compiled graph the deployment runs, with its durable
        checkpointer (read-only: the adapter's bookkeeping is bound to it)."""
        return self._graph

    # -- set-up ------------------------------------------------------------------

    def _saver(self) -> SqliteSaver:
        path = os.path.join(self.durable_dir, CHECKPOINT_FILE)
        self._connection = sqlite3.connect(path, check_same_thread=False)
        return SqliteSaver(self._connection)

    def _attach(self, graph: Any) -> Any:
        """The graph with a durable checkpointer."""
        if isinstance(graph, StateGraph):
            return graph.compile(checkpointer=self._saver())
        existing = getattr(graph, "checkpointer", None)
        if existing is None:
            return graph.copy(update={"checkpointer": self._saver()})
        if isinstance(existing, InMemorySaver):
            print(
                "langgraph adapter: the graph keeps its checkpoints in memory; "
                "a restart loses every paused turn",
                file=sys.stderr,
            )
        if not isinstance(existing, BaseCheckpointSaver):
            raise ValueError("the graph must be compiled without a checkpointer or with a checkpoint saver")
        return graph

    def capabilities(self) -> Capabilities:
        if self._capabilities is not None:
            return self._capabilities
        capabilities = default_capabilities()
        if HITL_NODE in getattr(self._graph, "nodes", {}):
            # A reviewer may edit the calls the middleware holds.
            capabilities = capabilities.with_trait(EDITABLE_CALLS)
        return self._declared(capabilities)

    def close(self) -> None:
        self._close_pausing()
        if self._connection is not None:
            self._connection.close()

    # -- running the graph ---------------------------------------------------------

    def thread_config(self, conversation: str, **extra: Any) -> Dict[str, Any]:
        """The run config of ``conversation``'s thread.

        The seam for a desk whose threads are not named by the bare
        conversation (a tenant or app prefix): override it and every place
        the adapter touches a thread (runs, state reads, the checkpoint a
        pause is bound to) uses the ``thread_id`` it returns."""
        config: Dict[str, Any] = {**self._config, **extra}
        if "callbacks" in extra and self._config.get("callbacks"):
            config["callbacks"] = [*self._config["callbacks"], *extra["callbacks"]]
        config["configurable"] = {**self._config.get("configurable", {}), "thread_id": conversation}
        return config

    def make_input(self, request: PromptRequest) -> Any:
        """The graph input for a prompt."""
        if self._make_input is not None:
            return self._make_input(request)
        return {"messages": [HumanMessage(content=request.prompt)]}

    def validate_answer(self, answer: Any) -> None:
        """Raises :class:`TurnFailure` for an answer the resume refuses."""
        if self._validate_answer is not None:
            self._validate_answer(answer)

    def _invoke(self, graph_input: Any, config: Dict[str, Any]) -> None:
        if self._durability is None:
            self._graph.invoke(graph_input, config)
        else:
            self._graph.invoke(graph_input, config, durability=self._durability)

    def run_turn(self, request: PromptRequest, turn: Turn) -> TurnRecord:
        if request.is_operator:
            return self._operator_record(request)
        conversation = request.conversation
        config = self.thread_config(conversation)
        begun = self._store.turns.begin(
            conversation, request_digest(request), self._lease, lambda: _baseline(self._graph.get_state(config))
        )
        recorder = ModelInputRecorder()
        try:
            with bound_turn(turn, request, self._turn_loop), traced(Trace()) as trace:
                run = self.thread_config(conversation, callbacks=[recorder])
                snapshot = self._graph.get_state(config)
                if not begun.retry or _checkpoint_id(snapshot) == begun.baseline["checkpoint_id"]:
                    self._invoke(self.make_input(request), run)
                elif snapshot.tasks and not snapshot.interrupts and not self._at_breakpoint(snapshot):
                    # The earlier attempt died mid-run: go on from its checkpoint.
                    self._invoke(None, run)
                record = self._record(conversation, begun.baseline, recorder, trace=trace)
                self._annotated(request, record, trace)
        except BaseException:
            self._store.turns.release(conversation, self._lease)
            raise
        self._store.turns.finish(conversation, self._lease)
        return record

    def review_procedure(self, request: ReviewRequest, turn: Turn) -> TurnRecord:
        """The structured review door: the adopter's ``review`` hook
        carries the decision out; the record carries ``attributes_of``."""
        record = self._review_record(request)
        return super().review_procedure(request, turn) if record is None else record

    def resume(self, request: ResumeRequest, turn: Turn) -> TurnRecord:
        pause = self._store.pauses.lookup(request)
        answer = self._entitled_answer(pause, request.answer)
        self.validate_answer(answer)
        config = self.thread_config(request.conversation)
        snapshot = self._graph.get_state(config)
        self.admit(pause, snapshot)
        handle = pause.handle
        recorder = ModelInputRecorder()
        try:
            with bound_turn(turn, request, self._turn_loop), traced(Trace()) as trace:
                run = self.thread_config(request.conversation, callbacks=[recorder])
                handed: Dict[str, Any] = {}
                if not self._waits_on(pause, snapshot):
                    # A redemption that died past the pause: go on from
                    # the checkpoint, if anything is left to run.
                    if snapshot.tasks and not snapshot.interrupts and not self._at_breakpoint(snapshot):
                        self._invoke(None, run)
                elif handle.get("breakpoint"):
                    self._pass_breakpoint(pause, snapshot, answer, run)
                else:
                    described = handle.get("interrupts") or []
                    self._invoke(Command(resume=self.resume_answers(pause, answer)), run)
                    handed = executed_edits(described, pause.calls, answer)
                edited = {**self._edited(request.conversation, handle.get("checkpoint_id")), **handed}
                record = self._record(
                    request.conversation, pause.baseline, recorder, parked=pause.calls, edited=edited, trace=trace
                )
                self._annotated(request, record, trace)
                after = self._graph.get_state(config)
                record.attributes.update(
                    resume_outcome="resumed",
                    resume_name=pause.interaction,
                    resume_checkpoint=self._has_checkpoint(request.conversation, handle.get("checkpoint_id")),
                    # The thread went on from the pause: past its checkpoint,
                    # or at least past its interrupt (a second interrupt() in
                    # the same node waits on the same checkpoint).
                    resume_continued=_checkpoint_id(after) != handle.get("checkpoint_id")
                    or (
                        not handle.get("breakpoint")
                        and handle.get("interrupt_id") not in {interrupt.id for interrupt in after.interrupts}
                    ),
                )
        except BaseException:
            self._store.pauses.release(pause.token, self._lease)
            raise
        self.finish(pause)
        return record


def deployment(make_graph: Callable[[], Any], **options: Any) -> Callable[[str], LangGraphDeployment]:
    """The factory :func:`symfonic_evals_protocol.serve` takes:
    ``make_graph()`` builds the graph before the handshake, in the process
    that serves it (after the fork server forked, so its model clients read
    that process's environment), and the deployment over it opens once the
    handshake names the durable directory, with ``options`` as
    :class:`LangGraphDeployment` takes them. ``make_graph`` must not touch
    the durable directory (a spare process builds it while the previous
    one still serves). A subclass's ``factory(make_graph, **options)`` is
    the same for the subclass."""
    return LangGraphDeployment.factory(make_graph, **options)


# The asynchronous flavour builds on the class above.
from ._langgraph_async import AsyncLangGraphDeployment  # noqa: E402
