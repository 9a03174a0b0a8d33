"""Desks that learn and gate procedures on the Agents SDK, Pydantic AI and
the Google ADK, each written against its adapter's procedural seams as an
adopter would, without subclassing the deployment: the procedures in the
shared SQLite store (``procedure_store.py``), a ``remember`` tool that
drafts one, the approved ones recalled in the instructions, a gate in
front of ``issue_refund`` (the tool's first lines; ADK's
``before_tool_callback``), the review door and operator turns forwarded to
the store. Each model is scripted, so nothing leaves the process:
``remember: TEXT`` asks for ``remember``, ``refund order N`` for
``issue_refund``, a tool's answer is quoted back.

Only the frameworks that are installed are built; ``make_deployment(name,
durable_dir)`` builds the named desk (``agents``, ``pydantic_ai``,
``google_adk``)."""

from __future__ import annotations

import importlib.util
import json
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from procedure_store import Procedures, identity
from symfonic_evals_protocol import Stage
from symfonic_evals_protocol.adapters import admitted, effects, refusal
from symfonic_evals_protocol.predicates import applies

STAGE = "procedural_precondition"


def plan(text: str) -> List[Tuple[str, Dict[str, Any]]]:
    """The scripted models' plan for a user's words: the calls to ask for."""
    if text.startswith("remember: "):
        return [("remember", {"text": text[len("remember: ") :]})]
    match = re.search(r"refund order (\d+)", text)
    return [("issue_refund", {"order": int(match[1])})] if match else []


def recall(procedures: Procedures) -> str:
    """The instructions: the approved procedures, recalled."""
    return "help desk; procedures:\n" + "\n".join(f"- {r['text']}" for r in procedures.rows("approved"))


def judge(procedures: Procedures, tool: str, call_id: Optional[str]) -> Optional[str]:
    """The gate: the approved procedures governing ``tool`` against the
    prompt's state; returns what the model reads of a refusal, or
    ``None`` when the call may act."""
    governing = [r for r in procedures.rows("approved") if r["tool"] == tool]
    ids = sorted(identity(r) for r in governing)
    blocked = sum(0 if applies(effects.request.state, r["precondition"])[0] else 1 for r in governing)
    if not governing:
        admitted(Stage(STAGE, "abstained", {"checked": 0}))
    elif blocked:
        return refusal(call_id or "", Stage(STAGE, "rejected", {"checked": len(governing), "refused": blocked}), ids)
    else:
        admitted(Stage(STAGE, "passed", {"checked": len(governing), "refused": 0}), ids)
    return None


def refund(procedures: Procedures, call_id: Optional[str], order: int) -> Any:
    """``issue_refund``'s body, behind the gate."""
    refused = judge(procedures, "issue_refund", call_id)
    if refused is not None:
        return refused
    effects.apply(f"refund:{order}", tool="issue_refund")
    return {"refunded": order}


def hooks(procedures: Procedures) -> Dict[str, Any]:
    """The deployment's procedural seams, forwarded to the store."""
    return {"operator": procedures.operator, "review": procedures.review, "attributes_of": procedures.evidence}


BUILDERS: Dict[str, Callable[[str, bool], Any]] = {}


# -- the OpenAI Agents SDK ------------------------------------------------------------

if importlib.util.find_spec("agents") is not None:
    from agents import Agent, ModelResponse, function_tool
    from agents.models.interface import Model
    from agents.tool_context import ToolContext
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from symfonic_evals_protocol.adapters.openai_agents import OpenAIAgentsDeployment

    def _said(text: str) -> Any:
        part = ResponseOutputText(type="output_text", text=text, annotations=[])
        return ResponseOutputMessage(id="m", type="message", role="assistant", status="completed", content=[part])

    class AgentsModel(Model):
        """The scripted model, on the SDK's ``Model`` interface."""

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
            items = [i if isinstance(i, dict) else i.model_dump(exclude_none=True) for i in input]
            if items[-1].get("type") == "function_call_output":
                return ModelResponse(output=[_said(f"done: {items[-1]['output']}")], usage=Usage(), response_id=None)
            text = next(str(i.get("content")) for i in reversed(items) if i.get("role") == "user")
            calls = [
                ResponseFunctionToolCall(
                    type="function_call", name=name, arguments=json_text(args), call_id=f"call_{n}", id=f"fc_{n}"
                )
                for n, (name, args) in enumerate(plan(text))
            ]
            return ModelResponse(output=calls or [_said("noted")], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    def agents_desk(durable_dir: str, with_hooks: bool = True) -> Any:
        procedures = Procedures(durable_dir)

        @function_tool
        def remember(text: str) -> str:
            """Draft a procedure."""
            procedures.draft(text)
            return "noted"

        @function_tool
        def issue_refund(ctx: ToolContext[Any], order: int) -> Any:
            """Refund an order."""
            return refund(procedures, ctx.tool_call_id, order)

        agent = Agent(
            name="desk", instructions=lambda ctx, agent: recall(procedures), model=AgentsModel(),
            tools=[remember, issue_refund],
        )
        return OpenAIAgentsDeployment(durable_dir, agent, **(hooks(procedures) if with_hooks else {}))

    BUILDERS["agents"] = agents_desk


# -- Pydantic AI ------------------------------------------------------------------------

if importlib.util.find_spec("pydantic_ai") is not None:
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ModelResponse as PydanticResponse
    from pydantic_ai.messages import TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from symfonic_evals_protocol.adapters.pydantic_ai import PydanticAIDeployment

    def pydantic_plan(messages: List[Any], info: AgentInfo) -> PydanticResponse:
        last = messages[-1]
        returns = [p.model_response_str() for p in last.parts if isinstance(p, ToolReturnPart)]
        if returns:
            return PydanticResponse(parts=[TextPart("done: " + " | ".join(returns))])
        text = [str(p.content) for p in last.parts if isinstance(p, UserPromptPart)][-1]
        calls = [ToolCallPart(name, args, tool_call_id=f"call_{n}") for n, (name, args) in enumerate(plan(text))]
        return PydanticResponse(parts=calls or [TextPart("noted")])

    def pydantic_desk(durable_dir: str, with_hooks: bool = True) -> Any:
        procedures = Procedures(durable_dir)
        agent = PydanticAgent(FunctionModel(pydantic_plan))

        @agent.instructions
        def procedures_recalled() -> str:
            return recall(procedures)

        @agent.tool_plain
        def remember(text: str) -> str:
            """Draft a procedure."""
            procedures.draft(text)
            return "noted"

        @agent.tool
        def issue_refund(ctx: RunContext[None], order: int) -> Any:
            """Refund an order."""
            return refund(procedures, ctx.tool_call_id, order)

        return PydanticAIDeployment(durable_dir, agent, **(hooks(procedures) if with_hooks else {}))

    BUILDERS["pydantic_ai"] = pydantic_desk


# -- the Google ADK ---------------------------------------------------------------------

if importlib.util.find_spec("google") is not None and importlib.util.find_spec("google.adk") is not None:
    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    from symfonic_evals_protocol.adapters.google_adk import AdkDeployment

    def _reply(*parts: Any) -> LlmResponse:
        return LlmResponse(content=types.Content(role="model", parts=list(parts)))

    class AdkModel(BaseLlm):
        """The scripted model, as an ADK ``BaseLlm``."""

        model: str = "scripted"

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            last = llm_request.contents[-1]
            answers = [p.function_response for p in last.parts or [] if p.function_response]
            if answers:
                yield _reply(types.Part(text="done: " + " | ".join(json_text(a.response) for a in answers)))
                return
            text = "".join(p.text or "" for p in last.parts or [])
            calls = [
                types.Part(function_call=types.FunctionCall(id=f"call_{n}", name=name, args=args))
                for n, (name, args) in enumerate(plan(text))
            ]
            yield _reply(*calls) if calls else _reply(types.Part(text="noted"))

    def adk_desk(durable_dir: str, with_hooks: bool = True) -> Any:
        procedures = Procedures(durable_dir)

        def remember(text: str) -> str:
            """Draft a procedure."""
            procedures.draft(text)
            return "noted"

        def issue_refund(order: int) -> Any:
            """Refund an order."""
            effects.apply(f"refund:{order}", tool="issue_refund")
            return {"refunded": order}

        def gate(tool: Any, args: Dict[str, Any], tool_context: Any) -> Optional[Dict[str, Any]]:
            if tool.name != "issue_refund":
                return None
            refused = judge(procedures, tool.name, tool_context.function_call_id)
            return None if refused is None else {"refused": refused}

        agent = LlmAgent(
            name="desk", model=AdkModel(), instruction=lambda ctx: recall(procedures),
            tools=[remember, issue_refund], before_tool_callback=gate,
        )
        return AdkDeployment(durable_dir, agent, **(hooks(procedures) if with_hooks else {}))

    BUILDERS["google_adk"] = adk_desk


def json_text(value: Any) -> str:
    """A value as the scripted models quote it."""
    return json.dumps(value, sort_keys=True)


def make_deployment(name: str, durable_dir: str, with_hooks: bool = True) -> Any:
    """The named framework's procedural desk on ``durable_dir``."""
    return BUILDERS[name](durable_dir, with_hooks)
