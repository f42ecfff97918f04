import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { RecordWrites, WrittenRecords } from "./RecordWrite"
import { writeEndpoint } from "./WriteEndpoint"

export const ConversationId = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9._:-]{1,200}$/u, {
    message: "a conversation id is 1-200 letters, digits, '.', '_', ':' or '-'"
  })
)

export class ChatTurn extends Schema.Class<ChatTurn>("ChatTurn")({
  /** The agent whose tool calls these are. */
  agent: Schema.String,
  calls: RecordWrites
}) {}

export class ChatApi extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.post("toolCalls", "/conversations/:conversationId/tool-calls", {
      params: { conversationId: ConversationId },
      payload: ChatTurn,
      success: WrittenRecords,
      ...writeEndpoint()
    }).annotate(
      OpenApi.Summary,
      "The tool calls an agent made in a user's chat turn, applied in one unit of work as the signed-in user " +
        "(within the user's grants), each row naming the conversation and the agent as its cause"
    )
  )
  .middleware(Authenticated) {}
