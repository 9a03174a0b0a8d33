"""Serve a Pydantic AI agent (``pydantic_ai.Agent``) as a symfonic-evals
deployment.

::

    from pydantic_ai import Agent
    from symfonic_evals_protocol import serve
    from symfonic_evals_protocol.adapters import effects
    from symfonic_evals_protocol.adapters.pydantic_ai import PydanticAIDeployment

    agent = Agent("openai:gpt-4o", instructions="...")

    @agent.tool_plain(requires_approval=True)
    def escalate_ticket(ticket: int) -> dict:
        effects.apply(f"escalate:{ticket}", tool="escalate_ticket")  # the harness's ledger
        return {"escalated": ticket}

    serve(lambda durable_dir: PydanticAIDeployment(durable_dir, agent))

What the adapter reports and keeps:

- **Conversations**: each conversation's message history
  (``result.all_messages()``, serialized with ``ModelMessagesTypeAdapter``)
  is kept in the trial's durable directory and handed to the next run as
  ``message_history``, so a restart keeps the conversation.
- **Tool calls** from the run's new messages: a ``ToolCallPart`` answered by
  a ``ToolReturnPart`` whose ``outcome`` is ``success`` is succeeded (the
  content, as JSON when it parses); ``failed``, ``retried`` (the tool raised
  ``ModelRetry``, or its arguments failed validation) and ``interrupted``
  are failed; ``denied`` (a person rejected it) is refused by the
  ``human-approval`` stage; a call awaiting approval is pending. Output
  tools (``final_result...``) are the run's answer, not calls. Ids are the
  model's, made unique across the trial.
- **The pause**: a run whose output is ``DeferredToolRequests`` with
  approvals (a tool with ``requires_approval=True``, or one raising
  ``ApprovalRequired``) ends the turn paused, with a token the adapter mints
  into its durable table, bound to the conversation and a question id, the
  run's messages kept beside it. The adapter adds ``DeferredToolRequests``
  to the run's output types when the agent's lack it.
- **The resume** checks the token (unknown, foreign, question id, spent or
  claimed by a live run), the answer (strictly ``{"approved": true|false}``)
  and staleness (a newer prompt in the conversation), claims the token, and
  runs the kept messages on with ``DeferredToolResults`` approving (or
  denying) every parked call; they come back in ``resolved``, a call that
  ran with the arguments it ran with. Pydantic AI lets every approval carry
  other arguments (``ToolApproved(override_args=...)``), so the adapter
  declares the ``editable-calls`` trait, names every parked call editable,
  and takes the edit answer too (``{"decisions": [...]}``, one per parked
  call: ``approve``, ``edit`` with the ``edited_action`` to run, ``reject``
  with the person's message, a denial); ``editable=False`` turns that off. The token is
  spent once the continuation finished. Pydantic AI itself refuses none of
  these: the same ``DeferredToolResults`` handed to the same history runs
  the approved tool again.
- **A client's retry after a crash** continues the request: the model's
  responses of every attempt are journaled, and the retry replays them
  instead of asking the model again (the tools run again, so their ledger
  keys come back as duplicates).
- **The model input**: every request the agent made to its model in the
  turn (instructions, then each part as text), recorded by a wrapper around
  the agent's model.
- **Streaming**: ``streaming=True`` runs each turn with ``agent.iter``,
  every model request's and tool call's events drained, as an app that
  streams does; the streamed responses are journaled as the plain ones
  are, and a retry replays them as streams of their complete parts.
- **Procedures**: ``operator=``, ``review=`` and ``attributes_of=`` as the
  LangGraph adapter takes them; a gate refuses a call with
  :func:`refusal` (``return refusal(ctx.tool_call_id, stage, read)`` in
  the tool, before it acts: reported ``refused`` by the stage, with its
  governance entry) and records a call it admits with :func:`admitted`.

What it cannot see: deferred calls that wait for an external result or an
answer (``CallDeferred``, ``DeferredToolRequests.calls``: a turn that ends
on one fails with ``DeferredCallUnsupported``); a tool that catches its own
errors and returns them as text (reported succeeded); a tool raising
anything but ``ModelRetry`` (Pydantic AI fails the run, which answers
``UnhandledException``); what a streaming app does with each event
(``streaming=True`` drains them); a run the app streams itself
(``run_stream``, or an ``event_stream_handler``) outside the adapter.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, AsyncIterator, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

try:
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
        repair_messages,
    )
    from pydantic_ai.models import CompletedStreamedResponse
    from pydantic_ai.models.wrapper import WrapperModel
    from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the Pydantic AI adapter needs Pydantic AI: pip install 'symfonic-evals-protocol[pydantic-ai]'"
    ) from missing

from .._async import AsyncTurn
from .._records import (
    EDITABLE_CALLS,
    Capabilities,
    Pause,
    PromptRequest,
    ResolvedCall,
    ResumeRequest,
    ReviewRequest,
    ToolCall,
    TurnFailure,
    TurnRecord,
)
from ._common import PauseRow, bound_turn, json_safe, request_digest, stale
from ._gate import Trace, admitted, refusal, traced
from ._journal import RunJournal
from ._approvers import DEFAULT_APPROVER_FIELD, ApproversOf
from ._pausing import AsyncPausingDeployment
from .tokens import TokenCodec

__all__ = [
    "APPROVAL_STAGE",
    "PydanticAIDeployment",
    "admitted",
    "deployment",
    "refusal",
    "render_messages",
]

APPROVAL_STAGE = "human-approval"
"""The stage a call is reported refused by when a person denied it."""

ADAPTER_STORE_FILE = "pydantic-ai-adapter.sqlite3"
JOURNAL_FILE = "pydantic-ai-journal.sqlite3"

OUTPUT_TOOL_PREFIX = "final_result"
"""Pydantic AI's output tools are named so: the run's answer, not a call."""

_DENIED = "The tool call was denied."


# -- model input ---------------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        return "".join(_text(part) for part in content)
    return json.dumps(json_safe(content), ensure_ascii=False)


def render_messages(messages: Sequence[ModelMessage]) -> str:
    """Messages as the model receives them, one part a line: the request's
    instructions, ``system:``/``user:`` prompts, ``tool NAME [ID]:`` returns
    and retries, ``assistant:`` text and ``call NAME ARGS`` calls."""
    lines: List[str] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            if message.instructions:
                lines.append(f"system: {message.instructions}")
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    lines.append(f"system: {part.content}")
                elif isinstance(part, UserPromptPart):
                    lines.append(f"user: {_text(part.content)}")
                elif isinstance(part, ToolReturnPart):
                    lines.append(f"tool {part.tool_name} [{part.tool_call_id}]: {part.model_response_str()}")
                elif isinstance(part, RetryPromptPart):
                    lines.append(f"tool {part.tool_name or ''} [{part.tool_call_id}]: {part.model_response()}")
        elif isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, TextPart):
                    lines.append(f"assistant: {part.content}")
                elif isinstance(part, ToolCallPart):
                    arguments = json.dumps(json_safe(part.args_as_dict()), ensure_ascii=False)
                    lines.append(f"call {part.tool_name} {arguments}")
    return "\n".join(lines)


class _JournaledModel(WrapperModel):
    """The agent's model, each request's messages recorded as the turn's
    model input and each response kept under the attempt: a retry gets the
    responses the crashed attempt got, in order, and asks the model only
    past them."""

    def __init__(self, wrapped: Any, journal: RunJournal, attempt: str, inputs: List[str]) -> None:
        super().__init__(wrapped)
        self._journal = journal
        self._attempt = attempt
        self._inputs = inputs
        self._seq = 0

    async def request(self, messages: List[ModelMessage], *args: Any, **kwargs: Any) -> ModelResponse:
        self._inputs.append(render_messages(messages))
        seq, self._seq = self._seq, self._seq + 1
        kept = self._journal.response(self._attempt, seq)
        if kept is not None:
            (response,) = ModelMessagesTypeAdapter.validate_json(kept)
            return response  # type: ignore[no-any-return]
        response = await super().request(messages, *args, **kwargs)
        self._journal.keep(self._attempt, seq, ModelMessagesTypeAdapter.dump_json([response]).decode())
        return response

    @contextlib.asynccontextmanager
    async def request_stream(
        self,
        messages: List[ModelMessage],
        model_settings: Any,
        model_request_parameters: Any,
        run_context: Any = None,
    ) -> AsyncIterator[Any]:
        """A streamed request, journaled as a plain one: a retry replays
        the kept response as a stream of its complete parts; a live
        stream's response is kept once the run drained it."""
        self._inputs.append(render_messages(messages))
        seq, self._seq = self._seq, self._seq + 1
        kept = self._journal.response(self._attempt, seq)
        if kept is not None:
            (response,) = ModelMessagesTypeAdapter.validate_json(kept)
            yield CompletedStreamedResponse(
                response, model_request_parameters=model_request_parameters, replay_events=True
            )
            return
        async with self.wrapped.request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as stream:
            yield stream
        response = stream.get()
        if response.state == "complete":
            self._journal.keep(self._attempt, seq, ModelMessagesTypeAdapter.dump_json([response]).decode())


async def _streamed(agent: Agent[Any, Any], prompt: Optional[str], options: Dict[str, Any]) -> Any:
    """Runs ``agent`` as an app that streams does (``agent.iter``, each
    model request's and tool call's events drained) and returns the run's
    result."""
    async with agent.iter(prompt, **options) as run:
        async for node in run:
            if Agent.is_model_request_node(node) or Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as events:
                    async for _ in events:
                        pass
    return run.result


# -- reading a run ---------------------------------------------------------------------


def _result(content: Any) -> Any:
    """A tool's return as the result to report: text holding JSON is that
    JSON, anything else as JSON carries it."""
    if isinstance(content, str):
        stripped = content.strip()
        if stripped[:1] in ("{", "["):
            try:
                return json.loads(stripped)
            except ValueError:
                pass
        return content
    return json_safe(content)


def _returns(messages: Sequence[ModelMessage]) -> Dict[str, Union[ToolReturnPart, RetryPromptPart]]:
    """Each call id's answer in ``messages`` (the last one, for a retried id)."""
    answers: Dict[str, Union[ToolReturnPart, RetryPromptPart]] = {}
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, (ToolReturnPart, RetryPromptPart)) and part.tool_call_id:
                    answers[part.tool_call_id] = part
    return answers


def _settled(answer: Union[ToolReturnPart, RetryPromptPart]) -> Tuple[str, Any]:
    """How an answered call ended: ``succeeded`` with its result, ``refused``,
    or ``failed`` with the error's text."""
    if isinstance(answer, RetryPromptPart):
        return "failed", answer.model_response()
    outcome = getattr(answer, "outcome", "success")
    if outcome == "success":
        return "succeeded", _result(answer.content)
    if outcome == "denied":
        return "refused", APPROVAL_STAGE
    return "failed", answer.model_response_str() or f"the tool call {outcome}"


def _calls(messages: Sequence[ModelMessage]) -> List[ToolCallPart]:
    return [
        part
        for message in messages
        if isinstance(message, ModelResponse)
        for part in message.parts
        if isinstance(part, ToolCallPart) and not part.tool_name.startswith(OUTPUT_TOOL_PREFIX)
    ]


# -- the deployment ------------------------------------------------------------------------


class PydanticAIDeployment(AsyncPausingDeployment):
    """A ``pydantic_ai.Agent`` served over the protocol.

    ``capabilities`` replaces the declared evidence; otherwise it is
    derived: ``tools``, ``human`` and the ``resume`` operation (tools may
    need approval, which the agent does not tell before a run), each of
    ``extension_tools`` contributed by ``extensions``, and ``traits``.
    ``deps(request)`` is the run's ``deps`` (default: ``None``);
    ``token_codec`` turns the pauses' keys into the tokens handed out
    (:class:`~symfonic_evals_protocol.adapters.tokens.TokenCodec`).
    ``streaming`` runs every turn with ``agent.iter``, its events drained,
    instead of ``agent.run``. ``operator(request)`` answers an operator's
    turn (the agent never sees it; without it the turn is refused
    ``operator.unsupported``), ``review(request)`` carries out the
    structured review door on the adopter's store (and declares the
    ``review`` operation), ``attributes_of(request)`` is what every record
    carries besides; with ``operator`` or ``review``, each prompt and
    resume turn publishes the procedures its gates read under
    ``procedural_enforcement_ids``.

    ``approvers`` and ``approver_field``: who may answer a pause, as
    :class:`._pausing.PausingDeployment` describes.

    The seams a subclass may override: :meth:`deps`, :meth:`read_answer`
    (the person's answer as approve/deny), :meth:`approvals` (the answer as
    each parked call's approval, edit or denial), :meth:`keep_messages` and
    :meth:`load_messages` (what a pause continues from), :meth:`check_spent`,
    :meth:`spend` and :meth:`finish` (the token's spent mark).

    The adapter keeps its own objects in private names, so a subclass may
    name its own ``store`` or ``journal``; :attr:`agent` is read-only.
    """

    def __init__(
        self,
        durable_dir: str,
        agent: Agent[Any, Any],
        *,
        capabilities: Optional[Capabilities] = None,
        traits: Iterable[str] = (),
        extension_tools: Iterable[str] = (),
        deps: Optional[Callable[[Union[PromptRequest, ResumeRequest]], Any]] = None,
        token_codec: Optional[TokenCodec] = None,
        editable: bool = True,
        streaming: bool = False,
        operator: Optional[Callable[[PromptRequest], str]] = None,
        review: Optional[Callable[[ReviewRequest], None]] = None,
        attributes_of: Optional[Callable[[Any], Mapping[str, Any]]] = None,
        approvers: Optional[ApproversOf] = None,
        approver_field: str = DEFAULT_APPROVER_FIELD,
    ) -> None:
        super().__init__(durable_dir)
        self._agent = agent
        self._editable = editable
        self._streaming = streaming
        self._deps = deps
        self._pausing(
            durable_dir,
            store_file=ADAPTER_STORE_FILE,
            token_codec=token_codec,
            capabilities=capabilities,
            traits=traits,
            extension_tools=extension_tools,
            operator=operator,
            review=review,
            attributes_of=attributes_of,
            approvers=approvers,
            approver_field=approver_field,
        )
        self._journal = RunJournal(durable_dir, JOURNAL_FILE)

    @property
    def agent(self) -> Any:
        """The agent the deployment runs (read-only: the adapter's
        bookkeeping is bound to it)."""
        return self._agent

    def capabilities(self) -> Capabilities:
        if self._capabilities is not None:
            return self._capabilities
        capabilities = Capabilities().capability("tools").capability("human").operation("resume")
        if self._editable:
            capabilities.with_trait(EDITABLE_CALLS)
        return self._declared(capabilities)

    async def close(self) -> None:
        self._journal.close()
        self._close_pausing()

    # -- seams -----------------------------------------------------------------

    def deps(self, request: Union[PromptRequest, ResumeRequest]) -> Any:
        """The run's ``deps`` (tools read them as ``ctx.deps``)."""
        return self._deps(request) if self._deps is not None else None

    def approvals(self, pause: PauseRow, answer: Any) -> Dict[str, Any]:
        """Each parked call's result for ``DeferredToolResults``, by the
        framework's call id: ``True`` or ``ToolDenied`` for an approval or
        a denial (:meth:`read_answer`), and for the edit answer one decision
        per parked call, in the order the pause reported them: ``approve``
        (``True``), ``edit`` (``ToolApproved(override_args=...)``; the tool
        may not change) or ``reject`` (``ToolDenied`` with the person's
        message). Raises ``InvalidAnswer`` before the token is spent."""
        if not self._editable:
            approved = self.read_answer(answer)
            return {call["call_id"]: True if approved else ToolDenied(_DENIED) for call in pause.calls}
        results: Dict[str, Any] = {}
        for call, decision in zip(pause.calls, self._decisions(pause, answer, edits=True)):
            if decision["type"] == "edit":
                results[call["call_id"]] = ToolApproved(override_args=decision["edited_action"]["args"])
            elif decision["type"] == "reject":
                results[call["call_id"]] = ToolDenied(decision.get("message") or _DENIED)
            else:
                results[call["call_id"]] = True
        return results

    def keep_messages(self, messages: List[ModelMessage]) -> Any:
        """What a pause keeps of its run's messages to continue from, as
        JSON (default: the messages themselves, serialized, in the durable
        pause table)."""
        return ModelMessagesTypeAdapter.dump_json(messages).decode()

    def load_messages(self, pause: PauseRow) -> List[ModelMessage]:
        """The messages a resume continues from (what :meth:`keep_messages`
        kept)."""
        return ModelMessagesTypeAdapter.validate_json(pause.handle["messages"])

    # -- turns -----------------------------------------------------------------

    async def run_turn(self, request: PromptRequest, turn: AsyncTurn) -> TurnRecord:
        if request.is_operator:
            return self._operator_record(request)
        conversation = request.conversation
        digest = request_digest(request)
        begun = self._store.turns.begin(conversation, digest, self._lease, lambda: None)
        attempt = f"prompt:{conversation}:{digest}"
        if not begun.retry:
            self._journal.forget(attempt)
        serial = self._journal.next_serial("prompt")
        self._journal.prompt_started(conversation, serial)
        kept = self._journal.history(conversation)
        # A pause the conversation moves on from leaves calls unanswered,
        # which a run with a new prompt refuses: close them out (the pause
        # is stale from now on).
        history = repair_messages(ModelMessagesTypeAdapter.validate_json(kept)) if kept else None
        try:
            result, inputs, trace = await self._run(attempt, turn, request, request.prompt, history, None)
            record = self._record(result, inputs, conversation, f"prompt-{serial}", serial, trace)
            self._annotated(request, record, trace)
        except BaseException:
            self._store.turns.release(conversation, self._lease)
            raise
        self._store.turns.finish(conversation, self._lease)
        return record

    async def resume(self, request: ResumeRequest, turn: AsyncTurn) -> TurnRecord:
        pause = self._store.pauses.lookup(request)
        self.check_spent(pause)
        approvals = self.approvals(pause, self._entitled_answer(pause, request.answer))
        handle = pause.handle
        if self._journal.latest_prompt(pause.conversation) > int(handle["serial"]):
            raise stale()
        self._claim(pause)
        try:
            history = self.load_messages(pause)
            results = DeferredToolResults(approvals=approvals)
            attempt = f"resume:{pause.question_id}"
            result, inputs, trace = await self._run(attempt, turn, request, None, history, results)
            record = self._record(
                result, inputs, pause.conversation, f"resume-{pause.question_id}", int(handle["serial"]), trace
            )
            record.resolved = self._resolved(pause, result, approvals, trace)
            self._annotated(request, self._resumed(record, pause), trace)
        except BaseException:
            self._store.pauses.release(pause.token, self._lease)
            raise
        self.finish(pause)
        return record

    # -- running the agent -------------------------------------------------------

    def _output_type(self) -> Any:
        """The agent's output types with ``DeferredToolRequests`` among them."""
        declared = getattr(self._agent, "output_type", str)
        types = list(declared) if isinstance(declared, (list, tuple)) else [declared]
        return types if DeferredToolRequests in types else [*types, DeferredToolRequests]

    async def _run(
        self,
        attempt: str,
        turn: AsyncTurn,
        request: Union[PromptRequest, ResumeRequest],
        prompt: Optional[str],
        history: Optional[List[ModelMessage]],
        results: Optional[DeferredToolResults],
    ) -> Tuple[Any, List[str], Trace]:
        inputs: List[str] = []
        model = _JournaledModel(self._agent.model, self._journal, attempt, inputs)
        options: Dict[str, Any] = {
            "message_history": history,
            "deferred_tool_results": results,
            "output_type": self._output_type(),
            "model": model,
            "deps": self.deps(request),
        }
        with bound_turn(turn, request, asyncio.get_running_loop()), traced(Trace()) as trace:
            if self._streaming:
                result = await _streamed(self._agent, prompt, options)
            else:
                result = await self._agent.run(prompt, **options)
        return result, inputs, trace

    # -- evidence ----------------------------------------------------------------

    def _record(
        self, result: Any, inputs: List[str], conversation: str, scope: str, serial: int, trace: Trace
    ) -> TurnRecord:
        """The turn's evidence from the run's new messages; pauses (minting
        a token) when the run stopped on calls awaiting approval."""
        messages = result.all_messages()
        self._journal.keep_history(conversation, ModelMessagesTypeAdapter.dump_json(messages).decode())
        new = result.new_messages()
        answers = _returns(new)
        output = result.output
        waiting = output if isinstance(output, DeferredToolRequests) else None
        if waiting is not None and waiting.calls:
            raise TurnFailure(
                "DeferredCallUnsupported",
                "the run waits on an external call, which the adapter cannot pause on",
                code="deferred.unsupported",
            )
        pending = {call.tool_call_id for call in waiting.approvals} if waiting is not None else set()
        record = TurnRecord(model_input="\n\n".join(inputs))
        parked: List[Dict[str, Any]] = []
        for call in _calls(new):
            reported = self._store.calls.report_id(conversation, scope, call.tool_call_id)
            arguments = json_safe(call.args_as_dict())
            if call.tool_call_id in pending:
                record.tool_calls.append(ToolCall.pending(reported, call.tool_name, arguments))
                parked.append(
                    {"id": reported, "call_id": call.tool_call_id, "name": call.tool_name, "arguments": arguments}
                )
                continue
            if call.tool_call_id in trace.refused:
                record.tool_calls.append(ToolCall.refused(reported, call.tool_name, arguments, trace.refused[call.tool_call_id]))
                continue
            answer = answers.get(call.tool_call_id)
            if answer is None:
                record.tool_calls.append(ToolCall.failed(reported, call.tool_name, arguments, "the agent never ran this call"))
                continue
            status, detail = _settled(answer)
            made = {"succeeded": ToolCall.succeeded, "refused": ToolCall.refused, "failed": ToolCall.failed}[status]
            record.tool_calls.append(made(reported, call.tool_name, arguments, detail))
        record.governance.extend(trace.governance())
        if parked:
            record.pause = self._pause(waiting, conversation, serial, parked, messages)
        else:
            record.answer = output if isinstance(output, str) else json.dumps(json_safe(output), ensure_ascii=False)
        return record

    def _pause(
        self,
        waiting: Any,
        conversation: str,
        serial: int,
        parked: List[Dict[str, Any]],
        messages: List[ModelMessage],
    ) -> Pause:
        handle = {"serial": serial, "messages": self.keep_messages(messages)}
        return self._mint(conversation, parked, handle, editable=self._editable)

    def _resolved(self, pause: PauseRow, result: Any, approvals: Dict[str, Any], trace: Trace) -> List[ResolvedCall]:
        """How the resumed run settled the calls the pause parked; a call
        that ran says the arguments it ran with (a person's edit, when they
        gave one)."""
        answers = _returns(result.new_messages())
        resolved = []
        for call in pause.calls:
            answer = answers.get(call["call_id"])
            if call["call_id"] in trace.refused:
                resolved.append(ResolvedCall.refused(call["id"], trace.refused[call["call_id"]]))
                continue
            if answer is None:
                resolved.append(ResolvedCall.failed(call["id"], "the approved call did not run"))
                continue
            status, detail = _settled(answer)
            if status == "refused":
                resolved.append(ResolvedCall.refused(call["id"], detail))
                continue
            approval = approvals.get(call["call_id"])
            edited = approval.override_args if isinstance(approval, ToolApproved) else None
            ran_with = edited if edited is not None else call.get("arguments")
            made = ResolvedCall.succeeded if status == "succeeded" else ResolvedCall.failed
            resolved.append(made(call["id"], detail, ran_with))
        return resolved


def deployment(make_agent: Callable[[], Agent[Any, Any]], **options: Any) -> Callable[[str], PydanticAIDeployment]:
    """The factory :func:`symfonic_evals_protocol.serve` takes:
    ``make_agent()`` builds the agent before the handshake, in the process
    that serves it (after the fork server forked, so its model client reads
    that process's environment), and the deployment over it opens once the
    handshake names the durable directory, with ``options`` as
    :class:`PydanticAIDeployment` takes them (see
    :func:`symfonic_evals_protocol.adapters.langgraph.deployment`)."""
    return PydanticAIDeployment.factory(make_agent, **options)
