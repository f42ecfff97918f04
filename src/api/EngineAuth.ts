import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as OpenApi from "effect/http-api/OpenApi"
import { Unauthorized } from "./errors"

/** `Authorization: Bearer <ENGINE_TOKEN>`: the workflow engine's own credential. */
export const engineBearer = HttpApiSecurity.http({ scheme: "bearer" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "The workflow engine's credential (ENGINE_TOKEN); no session or API key is accepted"
  )
)

/** Lets only the workflow engine through. It provides no principal: the engine is none. */
export class EngineAuthenticated extends HttpApiMiddleware.Service<EngineAuthenticated>()("EngineAuthenticated", {
  error: Unauthorized,
  security: { engine: engineBearer }
}) {}
