import * as HttpApi from "effect/http-api/HttpApi"
import * as OpenApi from "effect/http-api/OpenApi"
import { AuditApi } from "./AuditApi"
import { AuthApi } from "./AuthApi"
import { BroadcastApi } from "./BroadcastApi"
import { ChatApi } from "./ChatApi"
import { EngineApi } from "./EngineApi"
import { HealthApi } from "./HealthApi"
import { MembersApi } from "./MembersApi"
import { BusinessObjectsApi } from "./BusinessObjectsApi"
import { PresenceApi } from "./PresenceApi"
import { RecordsApi } from "./RecordsApi"
import { servedDocument } from "./OpenApiDocument"

/**
 * Every route of the service, under `/api`. One definition serves the server, the docs and the client.
 * The errors any route may answer with (`apiErrors`) are declared on every endpoint.
 */
export class Api extends HttpApi.make("api")
  .add(HealthApi)
  .add(AuthApi)
  .add(BusinessObjectsApi)
  .add(RecordsApi)
  .add(AuditApi)
  .add(MembersApi)
  .add(BroadcastApi)
  .add(PresenceApi)
  .add(ChatApi)
  .add(EngineApi)
  .prefix("/api")
  .annotate(OpenApi.Title, "Audit timeline and broadcast service")
  .annotate(OpenApi.Version, "0.1.0")
  .annotate(OpenApi.Servers, [{ url: "/", description: "this service: the origin the document was fetched from" }])
  .annotate(OpenApi.Transform, servedDocument) {}
