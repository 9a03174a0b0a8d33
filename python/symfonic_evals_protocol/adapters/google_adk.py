"""Serve a Google Agent Development Kit agent (``google.adk``) as a
symfonic-evals deployment.

::

    from google.adk.agents import LlmAgent
    from google.adk.tools import FunctionTool
    from symfonic_evals_protocol import serve
    from symfonic_evals_protocol.adapters import effects
    from symfonic_evals_protocol.adapters.google_adk import AdkDeployment

    def escalate_ticket(ticket: int) -> dict:
        effects.apply(f"escalate:{ticket}", tool="escalate_ticket")  # the harness's ledger
        return {"escalated": ticket}

    agent = LlmAgent(name="desk", model=..., instruction="...",
                     tools=[FunctionTool(escalate_ticket, require_confirmation=True)])
    serve(lambda durable_dir: AdkDeployment(durable_dir, agent))

What the adapter reports and keeps:

- **Sessions**: the conversation is the ADK session id, kept by a
  ``SqliteSessionService`` on a file in the trial's durable directory, so a
  restart keeps the conversation and its pending confirmations.
- **Tool calls** from the events of the turn's invocations: a
  ``function_call`` answered by a ``function_response`` is succeeded with
  the response (ADK's own failure shape, a response that is exactly
  ``{"error": ...}``, is failed); a call whose confirmation a person
  rejected is refused by the ``human-approval`` stage; a call awaiting
  confirmation is pending. ADK's ``adk_request_confirmation`` calls are the
  pause, not calls. Ids are the model's, made unique across the trial.
- **The pause**: a turn whose events request tool confirmations
  (``FunctionTool(require_confirmation=...)``, or a tool calling
  ``tool_context.request_confirmation()``) ends paused, with a token the
  adapter mints into its durable table, bound to the conversation and a
  question id; the confirmation requests' ids are kept beside it.
- **The resume** checks the token (unknown, foreign, question id, spent or
  claimed by a live run), the answer (strictly ``{"approved": true|false}``
  for every parked call, or ``{"decisions": [...]}``, ``approve`` or
  ``reject`` for each in pending order; an ``edit`` is refused, ADK's
  confirmation carries no arguments) and staleness (a newer prompt in the session), claims the token, and
  sends ADK the ``adk_request_confirmation`` function responses
  (``{"confirmed": ...}``) for every parked call; they come back in
  ``resolved`` (a call that ran with the arguments it was held with). ADK
  answers a second confirmation of the same call with silence (no
  events): the adapter refuses it with the replay error.
- **A client's retry after a crash**: a prompt whose process died (or
  whose turn raised) rewinds the session to before the crashed attempt's
  invocation and runs it again; a resume sends the same confirmations
  again, which ADK continues the paused invocation with. The model's
  responses of every attempt are journaled, and the retry replays them instead of asking the
  model again (the tools run again, so their ledger keys come back as
  duplicates).
- **The model input**: every request to the model in the turn (the system
  instruction, then each content part as text), recorded, with the
  journal, by a runner plugin.
- **Streaming**: ``streaming=True`` runs each turn in ADK's ``SSE``
  streaming mode, as an app that streams does; the partial responses are
  not kept, the final one of each model call is journaled, and a retry
  replays it.
- **Procedures**: ``operator=``, ``review=`` and ``attributes_of=`` as the
  LangGraph adapter takes them; a gate (a ``before_tool_callback``)
  refuses a call with :func:`refusal` (``return {"refused":
  refusal(tool_context.function_call_id, stage, read)}``: reported
  ``refused`` by the stage, with its governance entry, and the tool never
  runs) and records a call it admits with :func:`admitted`.

What it cannot see: a tool that raises (ADK fails the invocation, which
answers ``UnhandledException``); confirmations with a payload (the answer
is approve or reject); live (bidirectional) runs; sub-agents' transfers
are reported as the ``transfer_to_agent`` calls they are.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

try:
    from google.adk.agents import BaseAgent, RunConfig
    from google.adk.agents.run_config import StreamingMode, ToolThreadPoolConfig
    from google.adk.events import Event
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.plugins.base_plugin import BasePlugin
    from google.adk.runners import Runner
    from google.adk.sessions import BaseSessionService, InMemorySessionService
    from google.adk.sessions.sqlite_session_service import SqliteSessionService
    from google.genai import types
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        "the Google ADK adapter needs the ADK: pip install 'symfonic-evals-protocol[google-adk]'"
    ) from missing

from .._async import AsyncTurn
from .._records import Capabilities, PromptRequest, ResolvedCall, ResumeRequest, ReviewRequest, ToolCall, TurnRecord
from ._common import PauseRow, bound_turn, json_safe, request_digest, stale
from ._gate import Trace, admitted, refusal, traced
from ._journal import RunJournal
from ._approvers import DEFAULT_APPROVER_FIELD, ApproversOf
from ._pausing import AsyncPausingDeployment
from .tokens import TokenCodec

__all__ = ["APPROVAL_STAGE", "AdkDeployment", "admitted", "deployment", "refusal", "render_request"]

APPROVAL_STAGE = "human-approval"
"""The stage a call is reported refused by when a person rejected it."""

CONFIRMATION = "adk_request_confirmation"
"""ADK's function call asking for a tool confirmation."""

SESSIONS_FILE = "google-adk-sessions.sqlite3"
ADAPTER_STORE_FILE = "google-adk-adapter.sqlite3"
JOURNAL_FILE = "google-adk-journal.sqlite3"


# -- the model's side: input and journal --------------------------------------------


def _part_text(part: types.Part) -> Optional[str]:
    if part.text is not None:
        return part.text
    if part.function_call is not None:
        call = part.function_call
        return f"call {call.name} {json.dumps(json_safe(call.args or {}), ensure_ascii=False)}"
    if part.function_response is not None:
        answer = part.function_response
        return f"tool {answer.name} [{answer.id}]: {json.dumps(json_safe(answer.response), ensure_ascii=False)}"
    return None


def _instruction_text(instruction: Any) -> str:
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, types.Content):
        return "".join(part.text or "" for part in instruction.parts or [])
    return str(instruction)


def render_request(request: LlmRequest) -> str:
    """One model request as text: the system instruction, then each content
    part a line (``role: text``, ``role: call NAME ARGS``, ``role: tool NAME
    [ID]: RESPONSE``)."""
    system = _instruction_text(request.config.system_instruction if request.config else None)
    lines = [f"system: {system}"] if system else []
    for content in request.contents or []:
        for part in content.parts or []:
            text = _part_text(part)
            if text is not None:
                lines.append(f"{content.role or 'user'}: {text}")
    return "\n".join(lines)


class _TurnPlugin(BasePlugin):
    """Records each model request as the turn's model input, and keeps each
    response under the attempt: a retry gets the responses the crashed
    attempt got, in order, and asks the model only past them."""

    def __init__(self, journal: RunJournal, attempt: str) -> None:
        super().__init__(name="symfonic_evals")
        self._journal = journal
        self._attempt = attempt
        self._seq = 0
        self._replayed = False
        self.inputs: List[str] = []

    async def before_model_callback(self, *, callback_context: Any, llm_request: LlmRequest) -> Optional[LlmResponse]:
        self.inputs.append(render_request(llm_request))
        kept = self._journal.response(self._attempt, self._seq)
        self._replayed = kept is not None
        if kept is None:
            return None
        self._seq += 1
        return LlmResponse.model_validate_json(kept)

    async def after_model_callback(self, *, callback_context: Any, llm_response: LlmResponse) -> Optional[LlmResponse]:
        if not self._replayed and not llm_response.partial:
            self._journal.keep(self._attempt, self._seq, llm_response.model_dump_json(exclude_none=True))
            self._seq += 1
        self._replayed = False
        return None


# -- reading the events -----------------------------------------------------------------


def _is_failure(response: Any) -> bool:
    return isinstance(response, dict) and set(response) == {"error"}


class _Seen:
    """What the events of one run said: calls in order, the last response
    to each, the confirmations requested (original call id -> the id of
    ADK's confirmation call) and those it answered."""

    def __init__(self, events: List[Event]) -> None:
        self.calls: List[types.FunctionCall] = []
        self.responses: Dict[str, Any] = {}
        self.confirmations: Dict[str, str] = {}
        for event in events:
            for call in event.get_function_calls():
                if call.name == CONFIRMATION:
                    original = (call.args or {}).get("originalFunctionCall") or {}
                    if isinstance(original, dict) and original.get("id") and call.id:
                        self.confirmations[str(original["id"])] = call.id
                elif call.id:
                    self.calls.append(call)
            requested = set(event.actions.requested_tool_confirmations or {})
            for response in event.get_function_responses():
                if response.id and response.name != CONFIRMATION and response.id not in requested:
                    self.responses[response.id] = response.response

    def pending(self) -> List[str]:
        """The calls still waiting on their confirmation, in call order."""
        return [c.id for c in self.calls if c.id in self.confirmations and c.id not in self.responses]


# -- the deployment -----------------------------------------------------------------------


class AdkDeployment(AsyncPausingDeployment):
    """An ADK agent served over the protocol.

    ``capabilities`` replaces the declared evidence; otherwise it is
    derived: ``tools``, ``human`` and the ``resume`` operation, each of
    ``extension_tools`` contributed by ``extensions``, and ``traits``.
    ``app_name`` and ``user_id`` name the sessions (the conversation is the
    session id). ``session_service`` defaults to a ``SqliteSessionService``
    on a file in the durable directory (an ``InMemorySessionService`` is
    warned about: a restart loses the session). ``run_config`` is handed to
    every run; the default runs plain ``def`` tools on ADK's tool thread
    pool, so their blocking ``effects.apply`` works (on the event loop's
    thread it must be awaited: ``await effects.apply_async``). ``plugins``
    run after the
    adapter's own. ``token_codec`` turns the pauses' keys into the tokens
    handed out (:class:`~symfonic_evals_protocol.adapters.tokens.TokenCodec`).

    ``streaming`` runs every turn in ADK's ``SSE`` streaming mode.
    ``operator(request)`` answers an operator's turn (the agent never sees
    it; without it the turn is refused ``operator.unsupported``),
    ``review(request)`` carries out the structured review door on the
    adopter's store (and declares the ``review`` operation),
    ``attributes_of(request)`` is what every record carries besides; with
    ``operator`` or ``review``, each prompt and resume turn publishes the
    procedures its gates read under ``procedural_enforcement_ids``.

    ``approvers`` and ``approver_field``: who may answer a pause, as
    :class:`._pausing.PausingDeployment` describes.

    The seams a subclass may override: :meth:`read_answer`,
    :meth:`check_spent`, :meth:`spend` and :meth:`finish` (the token's
    spent mark).

    The adapter keeps its own objects in private names, so a subclass may
    name its own ``store`` or ``journal``; :attr:`agent` is read-only.
    """

    def __init__(
        self,
        durable_dir: str,
        agent: BaseAgent,
        *,
        app_name: str = "symfonic-evals",
        user_id: str = "user",
        capabilities: Optional[Capabilities] = None,
        traits: Iterable[str] = (),
        extension_tools: Iterable[str] = (),
        plugins: Iterable[BasePlugin] = (),
        session_service: Optional[BaseSessionService] = None,
        run_config: Optional[RunConfig] = None,
        token_codec: Optional[TokenCodec] = None,
        streaming: bool = False,
        operator: Optional[Callable[[PromptRequest], str]] = None,
        review: Optional[Callable[[ReviewRequest], None]] = None,
        attributes_of: Optional[Callable[[Any], Mapping[str, Any]]] = None,
        approvers: Optional[ApproversOf] = None,
        approver_field: str = DEFAULT_APPROVER_FIELD,
    ) -> None:
        super().__init__(durable_dir)
        self._agent = agent
        self._app_name = app_name
        self._user_id = user_id
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
        self._plugins = list(plugins)
        if session_service is None:
            session_service = SqliteSessionService(os.path.join(durable_dir, SESSIONS_FILE))
        elif isinstance(session_service, InMemorySessionService):
            print(
                "google-adk adapter: the sessions live in memory; a restart loses every pending confirmation",
                file=sys.stderr,
            )
        self._sessions = session_service
        config = run_config or RunConfig(tool_thread_pool_config=ToolThreadPoolConfig())
        if streaming:
            config = config.model_copy(update={"streaming_mode": StreamingMode.SSE})
        self._run_config = config
        self._journal = RunJournal(durable_dir, JOURNAL_FILE)

    @property
    def agent(self) -> Any:
        """The agent the deployment runs (read-only: the adapter's
        bookkeeping is bound to it)."""
        return self._agent

    def capabilities(self) -> Capabilities:
        if self._capabilities is not None:
            return self._capabilities
        return self._declared(Capabilities().capability("tools").capability("human").operation("resume"))

    async def close(self) -> None:
        closing = getattr(self._sessions, "close", None)
        if closing is not None:
            result = closing()
            if asyncio.iscoroutine(result):
                await result
        self._journal.close()
        self._close_pausing()

    # -- turns -----------------------------------------------------------------

    async def _events(self, conversation: str) -> List[Event]:
        session = await self._sessions.get_session(
            app_name=self._app_name, user_id=self._user_id, session_id=conversation
        )
        if session is None:
            await self._sessions.create_session(app_name=self._app_name, user_id=self._user_id, session_id=conversation)
            return []
        return list(session.events)

    async def _rewind_past(self, runner: Runner, conversation: str, baseline: int) -> None:
        """Rewinds the session to before the first invocation a crashed
        attempt left past ``baseline`` events, if it left any."""
        events = await self._events(conversation)
        if len(events) > baseline and events[baseline].invocation_id:
            await runner.rewind_async(
                user_id=self._user_id, session_id=conversation, rewind_before_invocation_id=events[baseline].invocation_id
            )

    async def run_turn(self, request: PromptRequest, turn: AsyncTurn) -> TurnRecord:
        if request.is_operator:
            return self._operator_record(request)
        conversation = request.conversation
        digest = request_digest(request)
        before = len(await self._events(conversation))
        begun = self._store.turns.begin(conversation, digest, self._lease, lambda: before)
        attempt = f"prompt:{conversation}:{digest}"
        if not begun.retry:
            self._journal.forget(attempt)
        serial = self._journal.next_serial("prompt")
        self._journal.prompt_started(conversation, serial)
        message = types.Content(role="user", parts=[types.Part(text=request.prompt)])
        try:
            events, plugin, trace = await self._run(
                attempt, turn, request, message, int(begun.baseline) if begun.retry else None
            )
            record = self._record(events, plugin, conversation, f"prompt-{serial}", serial, trace)
            self._annotated(request, record, trace)
        except BaseException:
            self._store.turns.release(conversation, self._lease)
            raise
        self._store.turns.finish(conversation, self._lease)
        return record

    async def resume(self, request: ResumeRequest, turn: AsyncTurn) -> TurnRecord:
        pause = self._store.pauses.lookup(request)
        self.check_spent(pause)
        decisions = self._decisions(pause, self._entitled_answer(pause, request.answer), edits=False)
        approved = {call["call_id"]: d["type"] == "approve" for call, d in zip(pause.calls, decisions)}
        handle = pause.handle
        if self._journal.latest_prompt(pause.conversation) > int(handle["serial"]):
            raise stale()
        self._claim(pause)
        try:
            message = types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call["confirmation"], name=CONFIRMATION, response={"confirmed": approved[call["call_id"]]}
                        )
                    )
                    for call in pause.calls
                ],
            )
            attempt = f"resume:{pause.question_id}"
            # A retry after a crash sends the same confirmations again: ADK
            # continues the paused invocation with them (rewinding would
            # drop the pause itself, which the invocation began).
            events, plugin, trace = await self._run(attempt, turn, request, message, None)
            scope = f"resume-{pause.question_id}"
            record = self._record(events, plugin, pause.conversation, scope, int(handle["serial"]), trace)
            record.resolved = self._resolved(pause, _Seen(events), approved, trace)
            self._annotated(request, self._resumed(record, pause), trace)
        except BaseException:
            self._store.pauses.release(pause.token, self._lease)
            raise
        self.finish(pause)
        return record

    async def _run(
        self,
        attempt: str,
        turn: AsyncTurn,
        request: Union[PromptRequest, ResumeRequest],
        message: types.Content,
        rewind_to: Optional[int],
    ) -> Tuple[List[Event], _TurnPlugin, Trace]:
        """Runs one invocation on ``message``: the events the session
        gained (after a rewind, on a retry) and the plugin that watched the
        model."""
        plugin = _TurnPlugin(self._journal, attempt)
        runner = Runner(
            app_name=self._app_name,
            agent=self._agent,
            session_service=self._sessions,
            plugins=[plugin, *self._plugins],
        )
        conversation = request.conversation
        if rewind_to is not None:
            await self._rewind_past(runner, conversation, rewind_to)
        before = len(await self._events(conversation))
        with bound_turn(turn, request, asyncio.get_running_loop()), traced(Trace()) as trace:
            async for _ in runner.run_async(
                user_id=self._user_id, session_id=conversation, new_message=message, run_config=self._run_config
            ):
                pass
        return (await self._events(conversation))[before:], plugin, trace

    # -- evidence ----------------------------------------------------------------

    def _record(
        self, events: List[Event], plugin: _TurnPlugin, conversation: str, scope: str, serial: int, trace: Trace
    ) -> TurnRecord:
        """The turn's evidence from its events; pauses (minting a token)
        when they left calls waiting on a confirmation."""
        seen = _Seen(events)
        pending = seen.pending()
        record = TurnRecord(model_input="\n\n".join(plugin.inputs))
        parked: List[Dict[str, Any]] = []
        for call in seen.calls:
            reported = self._store.calls.report_id(conversation, scope, call.id or "")
            arguments = json_safe(call.args or {})
            if call.id in pending:
                record.tool_calls.append(ToolCall.pending(reported, call.name or "", arguments))
                parked.append(
                    {
                        "id": reported,
                        "call_id": call.id,
                        "name": call.name,
                        "confirmation": seen.confirmations[call.id],
                        "arguments": arguments,
                    }
                )
            elif call.id in trace.refused:
                record.tool_calls.append(ToolCall.refused(reported, call.name or "", arguments, trace.refused[call.id]))
            elif call.id in seen.responses:
                response = json_safe(seen.responses[call.id])
                if _is_failure(response):
                    record.tool_calls.append(ToolCall.failed(reported, call.name or "", arguments, str(response["error"])))
                else:
                    record.tool_calls.append(ToolCall.succeeded(reported, call.name or "", arguments, response))
            else:
                record.tool_calls.append(ToolCall.failed(reported, call.name or "", arguments, "the agent never ran this call"))
        record.governance.extend(trace.governance())
        if parked:
            record.pause = self._mint(conversation, parked, {"serial": serial})
        else:
            record.answer = _answer(events)
        return record

    def _resolved(self, pause: PauseRow, seen: _Seen, approved: Dict[str, bool], trace: Trace) -> List[ResolvedCall]:
        resolved = []
        for call in pause.calls:
            if not approved[call["call_id"]]:
                resolved.append(ResolvedCall.refused(call["id"], APPROVAL_STAGE))
            elif call["call_id"] in trace.refused:
                resolved.append(ResolvedCall.refused(call["id"], trace.refused[call["call_id"]]))
            elif call["call_id"] not in seen.responses:
                resolved.append(ResolvedCall.failed(call["id"], "the approved call did not run"))
            else:
                response = json_safe(seen.responses[call["call_id"]])
                # ADK runs a confirmed call with the arguments it was held
                # with (the confirmation carries no payload).
                ran_with = call.get("arguments")
                if _is_failure(response):
                    resolved.append(ResolvedCall.failed(call["id"], str(response["error"]), ran_with))
                else:
                    resolved.append(ResolvedCall.succeeded(call["id"], response, ran_with))
        return resolved


def _answer(events: List[Event]) -> str:
    """The text of the turn's last model event with text."""
    for event in reversed(events):
        if event.author != "user" and event.content is not None:
            text = "".join(part.text or "" for part in event.content.parts or [] if not part.thought)
            if text:
                return text
    return ""


def deployment(make_agent: Callable[[], BaseAgent], **options: Any) -> Callable[[str], AdkDeployment]:
    """The factory :func:`symfonic_evals_protocol.serve` takes:
    ``make_agent()`` builds the agent before the handshake, in the process
    that serves it, and the deployment over it opens once the handshake
    names the durable directory, with ``options`` as :class:`AdkDeployment`
    takes them (see
    :func:`symfonic_evals_protocol.adapters.langgraph.deployment`)."""
    return AdkDeployment.factory(make_agent, **options)
