import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Effect, Option } from "effect"
import { Agents } from "../../agents/Agents"
import { actorOf } from "../../auth/actorOf"
import { BusinessObjectGuard } from "../../auth/BusinessObjectGuard"
import { CurrentPrincipal } from "../../api/Principal"
import { withActor, withCause } from "../../context/Frames"
import { Forbidden, NotFound } from "../../api/errors"
import { ServedApi } from "../ServedApi"
import { callerOf, Idempotency, keyedRequest, ok } from "../../idempotency/Idempotency"
import { applyWrites } from "../../records/applyWrites"
import { WrittenRecords } from "../../api/RecordWrite"
import { Records } from "../../records/Records"
import { UnitOfWork } from "../../unitOfWork/UnitOfWork"
import { excerpt } from "../../messages/inputExcerpt"

/**
 * A chat turn's tool calls. The user stays the actor and the user's grants
 * decide; the cause says which agent made the calls in which conversation.
 */
export const ChatHttp = HttpApiBuilder.group(ServedApi, "chat", (handlers) =>
  Effect.gen(function* () {
    const agents = yield* Agents
    const guard = yield* BusinessObjectGuard
    const records = yield* Records
    const units = yield* UnitOfWork
    const idempotency = yield* Idempotency

    return handlers.handle("toolCalls", (call) =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal
        if (principal.kind !== "user") {
          return yield* new Forbidden({
            message: "a chat turn belongs to a signed-in user; an API key or an agent cannot make one"
          })
        }
        const { params, payload } = call
        const agent = yield* agents.find(principal.workspace, payload.agent)
        if (Option.isNone(agent))
          return yield* new NotFound({ message: `no agent ${excerpt(payload.agent)} in this workspace` })
        for (const write of payload.calls) yield* guard.require(write.businessObject, "update")
        const writeAll = Effect.map(
          applyWrites(records, payload.calls),
          (written) => new WrittenRecords({ records: written })
        )
        const once = idempotency.run(keyedRequest(callerOf(principal), call), ok(WrittenRecords), writeAll)
        return yield* units.run(principal.workspace, once).pipe(
          withCause({
            kind: "conversation",
            conversationId: params.conversationId,
            agent: { id: agent.value.id, name: agent.value.name }
          }),
          withActor(actorOf(principal))
        )
      })
    )
  })
)
