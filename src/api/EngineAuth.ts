import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Unauthorized } from "./errors"

/** `Authorization: Bearer <ENGINE_TOKEN>`: the workflow engine's own credential. */
export const engineBearer = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "The workflow engine's credential (ENGINE_TOKEN); no session or API key is accepted"
  )
)

/** Lets only the workflow engine through. It provides no principal: the engine is none. */
export class EngineAuthenticated extends HttpApiMiddleware.Tag<EngineAuthenticated>()("EngineAuthenticated", {
  failure: Unauthorized,
  security: { engine: engineBearer }
}) {}
