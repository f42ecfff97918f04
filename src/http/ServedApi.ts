import * as HttpApi from "effect/http-api/HttpApi"
import { Api } from "../api/Api"

/**
 * `Api` as this server runs it (the handlers are built on it). An endpoint
 * that fails with an error it does not declare (a SQL error let through)
 * dies with the encoding's `SchemaError`; with `reportInput` that error
 * keeps the failure as its input, so the error answers
 * (`ErrorResponses.ts`) still see the failure itself, as effect 3 let them.
 */
export const ServedApi = Api.annotate(HttpApi.ErrorParseOptions, { reportInput: true })
