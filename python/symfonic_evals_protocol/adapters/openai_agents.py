"""Serve an OpenAI Agents SDK agent (``agents.Agent``) as a symfonic-evals
deployment.

    from agents import Agent, function_tool
    from symfonic_evals_protocol import serve
    from symfonic_evals_protocol.adapters import effects
    from symfonic_evals_protocol.adapters.openai_agents import OpenAIAgentsDeployment

    @function_tool(needs_approval=True)
    async def escalate_ticket(ticket: int) -> dict:
        if await effects.apply_async(f"escalate:{ticket}", tool="escalate_ticket"):
            ...  # perform the escalation, exactly once
        return {"escalated": ticket}

    agent = Agent(name="desk", instructions="...", tools=[escalate_ticket])
    serve(lambda durable_dir: OpenAIAgentsDeployment(durable_dir, agent))

What the adapter reports and keeps:

- **Tool calls** from the run's items: a ``ToolCallItem`` and its
  ``ToolCallOutputItem`` make a succeeded call; a tool that raised (the
  SDK's default failure policy turns it into a message to the model) or an
  MCP tool that answered ``isError`` a failed one; a rejected approval a
  refused one; a call awaiting approval (``needs_approval``, ``True`` or a
  callable deciding call by call) a pending one. Ids are the model's call
  ids, made unique across the trial.
- **Guardrails** refuse, never fail (:mod:`._openai_agents_guardrails`):
  an agent's input or output guardrail tripwire completes the turn with no
  answer and the guardrail's ``rejected`` stage in ``governance``; a tool
  input guardrail's ``reject_content`` or ``raise_exception`` reports the
  call refused by the guardrail's stage.
- **The pause**: a run interrupted for approval ends the turn paused, with
  a token the adapter mints (never the SDK's data), bound to the
  conversation and a question id, the ``RunState`` serialized beside it in
  the durable directory. A resume checks the token (unknown, foreign,
  question id, spent or claimed by a live run, stale), validates the answer
  strictly (``{"approved": true|false}`` for every held call, or
  ``{"decisions": [...]}``, ``approve`` or ``reject`` for each in pending
  order), claims the token, approves or rejects the interruptions and runs
  the saved state; the parked calls come
  back in ``resolved`` (a call that ran with the arguments it was held
  with). The token is spent for good only when the
  continuation finished (a crash leaves it to the client's retry) and a
  saved state is never run again after that: the SDK itself would run it
  again, approved tool included.
- **A client's retry after a crash** continues the request: the model
  responses of every attempt are journaled, and the retry replays them
  instead of asking the model again; the tools run again, so their ledger
  keys come back as duplicates.
- **Handoffs**: the run goes through a copy of the agent's handoff graph,
  every agent's model journaled, so a retry replays the handoff target's
  responses too. The adopter's hooks see these copies.
- **The model input** as the SDK handed it to the model (``on_llm_start``:
  instructions and input items after any ``call_model_input_filter``),
  every model call of the turn, as text.
- **Effects**: tool bodies reach the turn's ledger and witness through
  :data:`symfonic_evals_protocol.adapters.effects` (``await
  effects.apply_async(key, tool=...)``, ``await effects.witness_async(...)``;
  the blocking ``effects.apply`` works in a plain ``def`` tool, which the SDK
  runs on a worker thread).

What it cannot see: a tool with its own ``failure_error_function`` reports
its failures as results (the SDK never says the string is an error);
what a streaming app does with each event (``streaming=True`` drains
them); a custom ``Handoff`` that names no target agent (no ``handoff(agent)``)
runs with its target's model calls unjournaled; hosted tools (web search, code interpreter) have no output item
and are not reported.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

try:
    from agents import Agent, RunConfig, RunHooks, Runner, RunState
    from agents.items import ToolCallItem, ToolCallOutputItem
    from agents.models.interface import Model
except ImportError as missing:  # pragma: no cover - exercised without the SDK
    raise ImportError(
        "the OpenAI Agents SDK adapter needs the SDK: pip install 'symfonic-evals-protocol[openai-agents]'"
    ) from missing

from .._async import AsyncTurn
from .._mcp import MCP_FIXTURE, mcp_server_params, mcp_url
from .._records import (
    Capabilities,
    Pause,
    PromptRequest,
    ResolvedCall,
    ResumeRequest,
    ReviewRequest,
    Stage,
    ToolCall,
    TurnRecord,
)
from ._common import PauseRow, bound_turn, effects, json_safe, replayed, request_digest, stale
from ._gate import admitted, refusal, traced
from ._journal import RunJournal
from ._openai_agents_items import arguments_of as _arguments
from ._openai_agents_items import failure_of as _failure
from ._openai_agents_items import render_model_input
from ._openai_agents_items import result_of as _result
from ._openai_agents_scope import SCOPE as _SCOPE
from ._openai_agents_scope import Call as _Call
from ._openai_agents_scope import Hooks as _Hooks
from ._openai_agents_scope import Scope as _Scope
from ._openai_agents_scope import note_guarded as _note_guarded
from ._openai_agents_scope import watch_mcp_server as _watch_mcp_server
from ._openai_agents_guardrails import TRIPWIRES, Tripped, tripped, watch_tool_guardrails
from ._openai_agents_models import JournaledGraph, JournaledModel, reachable
from ._approvers import DEFAULT_APPROVER_FIELD, ApproversOf
from ._pausing import AsyncPausingDeployment
from .tokens import TokenCodec

__all__ = [
    "APPROVAL_STAGE",
    "OpenAIAgentsDeployment",
    "admitted",
    "deployment",
    "effects",
    "refusal",
    "render_model_input",
]

APPROVAL_STAGE = "human-approval"
"""The stage a call is reported refused by when a person rejected it."""

ADAPTER_STORE_FILE = "openai-agents-adapter.sqlite3"
"""The shared adapter store's file name for this adapter, in the durable
directory (the tables of :mod:`._common`)."""




# -- the deployment ----------------------------------------------------------------


class OpenAIAgentsDeployment(AsyncPausingDeployment):
    """An ``agents.Agent`` served over the protocol.

    ``run_config`` (default: tracing off), ``hooks`` and ``max_turns`` are
    handed to every ``Runner.run``; the adapter adds its own
    ``tool_error_formatter`` in front of the config's and its own hooks in
    front of ``hooks``. ``capabilities`` replaces the declared evidence;
    otherwise it is derived: ``tools`` for an agent with tools, ``human``
    and the ``resume`` operation when a tool needs approval, each of
    ``extension_tools`` contributed by ``extensions``, the ``mcp-fixture``
    trait when one of the agent's MCP servers is the harness's fixture, and
    ``traits`` (``idempotent-effects`` when the tools key their effects on
    the request, ``replicas``...). ``token_codec`` turns the pauses' keys
    into the tokens handed out
    (:class:`~symfonic_evals_protocol.adapters.tokens.TokenCodec`; default:
    opaque random tokens). ``streaming`` runs every turn with
    ``Runner.run_streamed`` (its events drained) instead of ``Runner.run``,
    as an app that streams does: the models' streamed calls are journaled
    as their plain calls are.

    The procedural seams, as the LangGraph adapter has them:
    ``operator(request)`` answers an operator's turn (the agent never sees
    it; without it the turn is refused ``operator.unsupported``);
    ``review(request)`` carries out the structured review door on the
    adopter's procedure store and declares the ``review`` operation;
    ``attributes_of(request)`` is what every record carries besides. A gate
    (a tool body, before it acts) refuses a call with :func:`refusal`
    (``return refusal(ctx.tool_call_id, stage, read)``: the call is
    reported refused by the stage, with its governance entry) and records
    a call it lets through with :func:`admitted`. With ``operator`` or
    ``review``, each prompt and resume turn publishes the procedures its
    gates read under ``procedural_enforcement_ids``.

    ``approvers`` and ``approver_field``: who may answer a pause, as
    :class:`._pausing.PausingDeployment` describes.

    The seams a subclass may override: :meth:`input_for` (what the agent is
    run on), :meth:`read_answer` (the person's answer as approve/reject),
    :meth:`read_decisions` (the answer for each held call),
    :meth:`load_state` (the saved ``RunState``), :meth:`check_spent`,
    :meth:`spend` and :meth:`finish` (the token's spent mark).

    The adapter keeps its own objects in private names, so a subclass may
    name its own ``store`` or ``journal``; :attr:`agent` and :attr:`run_config`
    are read-only.
    """

    def __init__(
        self,
        durable_dir: str,
        agent: Agent[Any],
        *,
        run_config: Optional[RunConfig] = None,
        hooks: Optional[RunHooks] = None,  # type: ignore[type-arg]
        max_turns: Optional[int] = None,
        capabilities: Optional[Capabilities] = None,
        traits: Iterable[str] = (),
        extension_tools: Iterable[str] = (),
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
        self._streaming = streaming
        config = run_config if run_config is not None else RunConfig(tracing_disabled=True)
        self._adopter_formatter = config.tool_error_formatter
        self._run_config = dataclasses.replace(config, tool_error_formatter=self._format_tool_error)
        self._hooks = _Hooks(hooks)
        self._max_turns = max_turns
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
        self._journal = RunJournal(durable_dir)
        watch_tool_guardrails(
            [tool for reached in reachable(agent) for tool in getattr(reached, "tools", []) or []], _note_guarded
        )

    @property
    def agent(self) -> Any:
        """The agent the deployment runs (read-only: the adapter's
        bookkeeping is bound to it)."""
        return self._agent

    @property
    def run_config(self) -> RunConfig:
        """The ``RunConfig`` every run gets, with the adapter's
        ``tool_error_formatter`` in front of the adopter's (read-only)."""
        return self._run_config

    # -- lifecycle -----------------------------------------------------------

    def capabilities(self) -> Capabilities:
        if self._capabilities is not None:
            return self._capabilities
        capabilities = Capabilities()
        agents = list(reachable(self._agent))
        tools = [tool for agent in agents for tool in getattr(agent, "tools", []) or []]
        servers = [server for agent in agents for server in getattr(agent, "mcp_servers", []) or []]
        if tools or servers:
            capabilities.capability("tools")
        if any(getattr(tool, "needs_approval", False) is not False for tool in tools):
            capabilities.capability("human").operation("resume")
        if any(_is_fixture(getattr(server, "params", None)) for server in servers):
            capabilities.with_trait(MCP_FIXTURE)
        return self._declared(capabilities)

    def _mcp_servers(self) -> List[Any]:
        """The MCP servers of every agent the run can reach, each once."""
        servers: Dict[int, Any] = {}
        for agent in reachable(self._agent):
            for server in getattr(agent, "mcp_servers", []) or []:
                servers.setdefault(id(server), server)
        return list(servers.values())

    async def start(self) -> None:
        """Connects the MCP servers of the agent and its handoff targets,
        watching their tool errors."""
        for server in self._mcp_servers():
            _watch_mcp_server(server)
            await server.connect()

    async def close(self) -> None:
        for server in self._mcp_servers():
            try:
                await server.cleanup()
            except Exception:  # a server gone at shutdown is no error of the turn's
                pass
        self._journal.close()
        self._close_pausing()

    # -- seams -----------------------------------------------------------------

    def input_for(self, request: PromptRequest) -> Union[str, List[Any]]:
        """What the agent runs on for a prompt (the prompt's ``state`` is
        the run's context, which tools read as ``ctx.context``)."""
        return request.prompt

    def read_decisions(self, pause: PauseRow, answer: Any) -> Dict[str, bool]:
        """Whether the person approved each held call, by the SDK's call id.

        One approval (:meth:`read_answer`) answers every call alike; an
        edit answer (``{"decisions": [...]}``, one per held call in the
        order the pause reported them) answers each: ``approve`` or
        ``reject``. An ``edit`` is refused (``InvalidAnswer``): the SDK's
        approval carries no arguments."""
        decisions = self._decisions(pause, answer, edits=False)
        return {call["call_id"]: d["type"] == "approve" for call, d in zip(pause.calls, decisions)}

    async def load_state(self, pause: PauseRow, agent: Agent[Any]) -> Any:
        """The ``RunState`` the pause saved, read from the durable store."""
        return await RunState.from_string(agent, pause.handle["state"])

    # -- turns -----------------------------------------------------------------

    async def run_turn(self, request: PromptRequest, turn: AsyncTurn) -> TurnRecord:
        if request.is_operator:
            return self._operator_record(request)
        digest = request_digest(request)
        begun = self._store.turns.begin(request.conversation, digest, self._lease, lambda: None)
        attempt = f"prompt:{request.conversation}:{digest}"
        if not begun.retry:
            self._journal.forget(attempt)
        serial = self._journal.next_serial("prompt")
        self._journal.prompt_started(request.conversation, serial)
        try:
            agent, config = self._journaled(attempt)
            result, scope = await self._run(agent, config, self.input_for(request), turn, request, request.state)
            record = self._record(result, scope, request.conversation, f"prompt-{serial}", serial, seen=())
            self._annotated(request, record, scope.trace)
        except BaseException:
            self._store.turns.release(request.conversation, self._lease)
            raise
        self._store.turns.finish(request.conversation, self._lease)
        return record

    async def resume(self, request: ResumeRequest, turn: AsyncTurn) -> TurnRecord:
        pause = self._store.pauses.lookup(request)
        self.check_spent(pause)
        approvals = self.read_decisions(pause, self._entitled_answer(pause, request.answer))
        handle = pause.handle
        if self._journal.latest_prompt(pause.conversation) > int(handle["serial"]):
            raise stale()
        attempt = f"resume:{pause.question_id}"
        agent, config = self._journaled(attempt)
        state = await self.load_state(pause, agent)
        interruptions = state.get_interruptions()
        if not interruptions:
            # The state holds no pending approval: it was run already.
            raise replayed()
        self._claim(pause)
        try:
            for item in interruptions:
                if approvals.get(str(item.call_id), False):
                    state.approve(item)
                else:
                    state.reject(item)
            result, scope = await self._run(agent, config, state, turn, request, None)
            record = self._record(
                result, scope, pause.conversation, f"resume-{pause.question_id}", int(handle["serial"]),
                seen=handle.get("seen", ()),
            )
            record.resolved = self._resolved(pause, result, scope, approvals)
            self._annotated(request, self._resumed(record, pause), scope.trace)
        except BaseException:
            self._store.pauses.release(pause.token, self._lease)
            raise
        self.finish(pause)
        return record

    # -- running the agent ---------------------------------------------------------

    def _journaled(self, attempt: str) -> Tuple[Agent[Any], RunConfig]:
        """The agent and config of one attempt, every model the run can
        reach journaled under ``attempt``: the config's model, or else each
        agent's of the handoff graph (:class:`JournaledGraph`)."""
        config = self._run_config
        if config.model is not None:
            inner = config.model if isinstance(config.model, Model) else config.model_provider.get_model(config.model)
            return self._agent, dataclasses.replace(config, model=JournaledModel(inner, self._journal, attempt))
        return JournaledGraph(self._agent, config, self._journal, attempt).start, config

    async def _run(
        self,
        agent: Agent[Any],
        config: RunConfig,
        start: Any,
        turn: AsyncTurn,
        request: Union[PromptRequest, ResumeRequest],
        context: Any,
    ) -> Tuple[Any, _Scope]:
        scope = _Scope()
        token = _SCOPE.set(scope)
        options: Dict[str, Any] = {"run_config": config, "hooks": self._hooks}
        if self._max_turns is not None:
            options["max_turns"] = self._max_turns
        if not isinstance(start, RunState):
            options["context"] = context
        try:
            with bound_turn(turn, request, asyncio.get_running_loop()), traced(scope.trace):
                if self._streaming:
                    # As a streaming app runs it: the events drained, the
                    # streamed result read as a run's.
                    result = Runner.run_streamed(agent, start, **options)
                    async for _ in result.stream_events():
                        pass
                else:
                    result = await Runner.run(agent, start, **options)
        except TRIPWIRES as error:
            # A guardrail refused: the turn is answered, not failed.
            result = tripped(error)
        except Exception as error:
            failure = _failure(error)
            if failure is None or failure is error:
                raise
            # Chained, so the turn error carries the SDK exception's trace
            # (type and frames, never its message) beneath the typed kind.
            raise failure from error
        finally:
            _SCOPE.reset(token)
        return result, scope

    async def _format_tool_error(self, args: Any) -> Optional[str]:
        """Notes a failed or rejected call, then formats its message as the
        adopter's formatter (or the SDK) would."""
        scope = _SCOPE.get()
        if scope is not None:
            if args.kind == "approval_rejected":
                scope.rejected.add(args.call_id)
            elif args.kind == "tool_not_found":
                scope.errors[args.call_id] = "no such tool"
            else:
                error = args.error
                scope.errors[args.call_id] = (str(error) or type(error).__name__) if error is not None else "tool error"
        if self._adopter_formatter is None:
            return None
        value = self._adopter_formatter(args)
        return await value if inspect.isawaitable(value) else value

    # -- evidence ----------------------------------------------------------------

    def _record(
        self,
        result: Any,
        scope: _Scope,
        conversation: str,
        call_scope: str,
        serial: int,
        *,
        seen: Sequence[str],
    ) -> TurnRecord:
        """The turn's evidence from the run's items; pauses again (minting a
        token) when the run was interrupted for approval. ``seen`` are the
        call ids an earlier turn of the same run reported already."""
        skip = set(seen)
        calls: Dict[str, _Call] = {}
        for item in result.new_items:
            call_id = getattr(item, "call_id", None)
            if not isinstance(call_id, str) or call_id in skip:
                continue
            if isinstance(item, ToolCallItem):
                name = item.tool_name or getattr(item.raw_item, "type", "tool")
                calls.setdefault(call_id, _Call(str(name), _arguments(item.raw_item)))
            elif isinstance(item, ToolCallOutputItem) and call_id in calls:
                calls[call_id].output, calls[call_id].ran = item.output, True
        for call_id, call in scope.guarded_calls.items():
            if call_id not in skip:
                calls.setdefault(call_id, call)
        pending = {item.call_id: item for item in result.interruptions or [] if isinstance(item.call_id, str)}
        record = TurnRecord(model_input="\n\n".join(scope.model_inputs))
        parked: List[Dict[str, Any]] = []
        for call_id, call in calls.items():
            reported = self._store.calls.report_id(conversation, call_scope, call_id)
            if call_id in pending:
                record.tool_calls.append(ToolCall.pending(reported, call.name, call.arguments))
                parked.append({"id": reported, "call_id": call_id, "name": call.name, "arguments": call.arguments})
            elif call_id in scope.trace.refused:
                record.tool_calls.append(ToolCall.refused(reported, call.name, call.arguments, scope.trace.refused[call_id]))
            elif call_id in scope.guarded:
                record.tool_calls.append(ToolCall.refused(reported, call.name, call.arguments, scope.guarded[call_id]))
            elif call_id in scope.rejected:
                record.tool_calls.append(ToolCall.refused(reported, call.name, call.arguments, APPROVAL_STAGE))
            elif call_id in scope.errors:
                record.tool_calls.append(ToolCall.failed(reported, call.name, call.arguments, scope.errors[call_id]))
            elif call.ran:
                record.tool_calls.append(ToolCall.succeeded(reported, call.name, call.arguments, _result(call.output)))
            # A call with no output item (a hosted tool) is not reported.
        record.governance = _guardrail_stages(result, scope)
        if parked:
            record.pause = self._pause(result, conversation, serial, parked, [*skip, *calls])
        else:
            output = result.final_output
            record.answer = output if isinstance(output, str) else json.dumps(json_safe(output), ensure_ascii=False)
        return record

    def _pause(
        self, result: Any, conversation: str, serial: int, parked: List[Dict[str, Any]], seen: List[str]
    ) -> Pause:
        """Mints the pause of an interrupted run: the token, its question
        and the saved ``RunState``, in the durable store."""
        handle = {"state": result.to_state().to_string(), "serial": serial, "seen": sorted(set(seen))}
        return self._mint(conversation, parked, handle)

    def _resolved(self, pause: PauseRow, result: Any, scope: _Scope, approvals: Dict[str, bool]) -> List[ResolvedCall]:
        """How the resumed run settled the calls the pause parked; a call
        that ran says the arguments it ran with."""
        outputs = {
            item.call_id: item.output for item in result.new_items if isinstance(item, ToolCallOutputItem)
        }
        resolved = []
        for call in pause.calls:
            call_id, reported = call["call_id"], call["id"]
            if not approvals.get(call_id, False) or call_id in scope.rejected:
                resolved.append(ResolvedCall.refused(reported, APPROVAL_STAGE))
            elif call_id in scope.trace.refused:
                resolved.append(ResolvedCall.refused(reported, scope.trace.refused[call_id]))
            elif call_id in scope.guarded:
                resolved.append(ResolvedCall.refused(reported, scope.guarded[call_id]))
            elif call_id in scope.errors:
                resolved.append(ResolvedCall.failed(reported, scope.errors[call_id], call.get("arguments")))
            elif call_id in outputs:
                # The SDK runs an approved call with the arguments it was
                # held with (an approval carries no edit).
                resolved.append(ResolvedCall.succeeded(reported, _result(outputs[call_id]), call.get("arguments")))
            else:
                resolved.append(ResolvedCall.failed(reported, "the approved call did not run"))
        return resolved


def _guardrail_stages(result: Any, scope: _Scope) -> List[Stage]:
    """The guardrails that refused in the run, each a ``rejected`` stage
    (the tool guardrails that rejected a call, and the one whose tripwire
    halted the run), then the entries of the adopter's gates."""
    names = list(dict.fromkeys(scope.guarded.values()))
    if isinstance(result, Tripped) and result.stage not in names:
        names.append(result.stage)
    return [*(Stage(name, "rejected") for name in names), *scope.trace.governance()]


def _is_fixture(params: Any) -> bool:
    """Whether an MCP server's ``params`` bind the harness's fixture: its
    URL (a streamable HTTP server's params are a dict), or its stdio
    bridge, ``mcp_server_params("stdio")`` (a stdio server keeps them as
    the ``mcp`` package's ``StdioServerParameters``)."""
    url = mcp_url()
    if isinstance(params, dict):
        return url is not None and params.get("url") == url
    bridge = mcp_server_params("stdio")
    command, args = getattr(params, "command", None), getattr(params, "args", None)
    return bridge is not None and command == bridge["command"] and list(args or []) == bridge["args"]


def deployment(
    make_agent: Callable[[], Agent[Any]], **options: Any
) -> Callable[[str], OpenAIAgentsDeployment]:
    """The factory :func:`symfonic_evals_protocol.serve` takes:
    ``make_agent()`` builds the agent before the handshake, in the process
    that serves it (after the fork server forked), and the deployment over
    it opens once the handshake names the durable directory, with
    ``options`` as :class:`OpenAIAgentsDeployment` takes them (see
    :func:`symfonic_evals_protocol.adapters.langgraph.deployment`)."""
    return OpenAIAgentsDeployment.factory(make_agent, **options)
