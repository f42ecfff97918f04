import { HttpApi, OpenApi } from "@effect/platform"
import { AuditApi } from "../audit/AuditApi"
import { AuthApi } from "../auth/AuthApi"
import { BroadcastApi } from "../broadcast/BroadcastApi"
import { ChatApi } from "../chat/ChatApi"
import { EngineApi } from "../engine/EngineApi"
import {
  BadRequest,
  Forbidden,
  InternalError,
  PayloadTooLarge,
  ServiceUnavailable,
  UnprocessableEntity,
  UnsupportedMediaType
} from "../errors"
import { HealthApi } from "../health/HealthApi"
import { BusinessObjectsApi } from "../plugins/BusinessObjectsApi"
import { PresenceApi } from "../presence/PresenceApi"
import { RecordsApi } from "../records/RecordsApi"

/** Every route of the service, under `/api`. One definition serves the server, the docs and the client. */
export class Api extends HttpApi.make("api")
  .add(HealthApi)
  .add(AuthApi)
  .add(BusinessObjectsApi)
  .add(RecordsApi)
  .add(AuditApi)
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
  .annotate(OpenApi.Version, "0.1.0") {}
