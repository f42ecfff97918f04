import { HttpApi, OpenApi } from "@effect/platform"
import { AuditApi } from "./AuditApi"
import { AuthApi } from "./AuthApi"
import { BroadcastApi } from "./BroadcastApi"
import { ChatApi } from "./ChatApi"
import { EngineApi } from "./EngineApi"
import {
  BadRequest,
  Forbidden,
  InternalError,
  PayloadTooLarge,
  ServiceUnavailable,
  UnprocessableEntity,
  UnsupportedMediaType
} from "./errors"
import { HealthApi } from "./HealthApi"
import { MembersApi } from "./MembersApi"
import { BusinessObjectsApi } from "./BusinessObjectsApi"
import { PresenceApi } from "./PresenceApi"
import { RecordsApi } from "./RecordsApi"

/** Every route of the service, under `/api`. One definition serves the server, the docs and the client. */
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
  .addError(BadRequest)
  .addError(Forbidden)
  .addError(InternalError)
  .addError(PayloadTooLarge)
  .addError(UnsupportedMediaType)
  .addError(UnprocessableEntity)
  .addError(ServiceUnavailable)
  .prefix("/api")
  .annotate(OpenApi.Title, "Audit timeline and broadcast service")
  .annotate(OpenApi.Version, "0.1.0")
  .annotate(OpenApi.Servers, [{ url: "/", description: "this service: the origin the document was fetched from" }]) {}
