/**
 * The LangGraph desk's chat model: scripted, no network, so the graph's
 * shape is what is judged, yet a real `BaseChatModel`, so the prompts it
 * receives reach the turn's model input as a provider's model's would.
 * An escalation or a weather question becomes a tool call; a tool's answer
 * is read back to the user.
 */

import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/** The scripted reply to a conversation. */
export function reply(messages: BaseMessage[]): AIMessage {
  const last = messages.at(-1);
  if (last?.getType() === "tool") return new AIMessage(`Done: ${String(last.content)}`);
  const prompt = String(last?.content ?? "");
  const ticket = /escalate ticket (\d+)/i.exec(prompt)?.[1];
  if (ticket !== undefined) {
    const call = { id: `call_${ticket}`, name: "escalate_ticket", args: { ticket: Number(ticket) } };
    return new AIMessage({ content: "", tool_calls: [call] });
  }
  const city = /weather in (\p{Lu}[\p{L}-]*)/u.exec(prompt)?.[1];
  if (city !== undefined) {
    // Ids unique in the thread, as a provider's are: LangGraph's ToolNode
    // does not run a call whose id already has an answer in the thread.
    const call = { id: `call_weather_${messages.length}`, name: "weather_lookup", args: { city } };
    return new AIMessage({ content: "", tool_calls: [call] });
  }
  return new AIMessage("Hello! How can I help?");
}

/** {@link reply} as a chat model. */
export class ScriptedChatModel extends BaseChatModel {
  constructor() {
    super({});
  }

  _llmType(): string {
    return "scripted";
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = reply(messages);
    return { generations: [{ text: String(message.content), message }] };
  }
}
