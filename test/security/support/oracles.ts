import { Predicate } from "effect"
import { parseIfMatch } from "../../../src/api/EntityTag"
import type { Case, OriginChoice } from "./arbitraries"
import { notJsonContentTypes } from "./arbitraries"
import type { SchemaChecksum } from "./checksum"
import { changedTables } from "./checksum"
import type { Fixture } from "./fixture"
import type { RawOutcome, RawRequest } from "./rawHttp"
import type { Route } from "./routes"
import { isApiRoute, stateChanging } from "./routes"

/** An error message is a sentence, not a dump. */
export const maxMessageLength = 500
/** The whole error body, `issues` included. */
export const maxErrorBodyBytes = 4_096
/** No run of this many characters of the input may come back in an error (a short prefix may). */
export const echoWindow = 200

const foreignOrigins: ReadonlySet<OriginChoice> = new Set(["foreign", "null", "sameSiteOtherPort", "junk"])

const originValue = (fixture: Fixture, choice: OriginChoice, principal: Case["principal"]): string | undefined => {
  switch (choice) {
    case "principal":
      return principal === "admin" ? fixture.origin : undefined
    case "none":
      return undefined
    case "same":
      return fixture.origin
    case "foreign":
      return "http://evil.example"
    case "null":
      return "null"
    case "sameSiteOtherPort":
      return "http://127.0.0.1:1"
    case "junk":
      // Starts like the service's origin: a prefix match would take it for its own.
      return `${fixture.origin}.evil.example`
  }
}

/** The bytes of a case: the principal's credentials, then whatever the fuzz chose on top. */
export const toRawRequest = (fixture: Fixture, route: Route, input: Case): RawRequest => {
  const segments = new Map(input.segments)
  const parts = route.path
    .split(/(:[A-Za-z]+)/)
    .map((part) =>
      part.startsWith(":") ? (segments.get(part.slice(1))?.text ?? Buffer.from("x")) : Buffer.from(part, "latin1")
    )
  const target = Buffer.concat([...parts, Buffer.from(input.query, "latin1")])
  const headers: Array<readonly [string, Buffer]> = []
  const add = (name: string, value: string | undefined) => {
    if (value !== undefined) headers.push([name, Buffer.from(value, "latin1")])
  }
  const cookie =
    input.principal === "admin"
      ? input.headers.cookie === undefined
        ? fixture.adminCookie
        : `${fixture.adminCookie}; ${input.headers.cookie}`
      : input.headers.cookie
  add("cookie", cookie)
  add(
    "authorization",
    input.headers.authorization ?? (input.principal === "apiKey" ? `Bearer ${fixture.apiKey}` : undefined)
  )
  add("origin", originValue(fixture, input.headers.origin, input.principal))
  add("content-type", input.headers.contentType)
  for (const [name, value] of input.headers.extra) add(name, value)
  return { method: input.method, target, headers, body: input.body.bytes }
}

const shorten = (text: string, max = 120) =>
  text.length <= max ? text : `${text.slice(0, max)}... (${text.length} chars)`

/** A case in a few lines: what a failure message shows of the (shrunk) input. */
export const describeCase = (fixture: Fixture, route: Route, input: Case): string => {
  const raw = toRawRequest(fixture, route, input)
  const lines = [
    `${input.principal} ${raw.method} ${shorten(JSON.stringify(raw.target.toString("latin1")))}`,
    ...raw.headers.map(([name, value]) => `  ${name}: ${shorten(JSON.stringify(value.toString("latin1")), 100)}`),
    `  body (${input.body.kind}): ${raw.body === undefined ? "none" : shorten(JSON.stringify(raw.body.toString("latin1")), 200)}`
  ]
  return lines.join("\n")
}

/** The parts of a request a reply must not echo. */
const inputTexts = (raw: RawRequest): ReadonlyArray<string> => [
  raw.target.toString("latin1"),
  ...(raw.body === undefined ? [] : [raw.body.toString("utf8"), raw.body.toString("latin1")]),
  ...raw.headers.map(([, value]) => value.toString("latin1"))
]

const echoes = (reply: string, input: string): boolean => {
  if (input.length < echoWindow) return false
  for (let at = 0; at + echoWindow <= input.length; at += echoWindow / 2) {
    if (reply.includes(input.slice(at, at + echoWindow))) return true
  }
  return reply.includes(input.slice(input.length - echoWindow))
}

const jsonContentTypes: ReadonlySet<string> = new Set([
  "application/json",
  "application/json; charset=utf-8",
  "application/json;charset=UTF-8",
  "APPLICATION/JSON"
])

const is2xx = (status: number) => status >= 200 && status < 300

/** Path parameters that name something that must exist (a business object, a record, an action, a workspace). */
const namingParams: ReadonlySet<string> = new Set(["namespace", "name", "action", "businessObject", "id", "workspace"])

export interface Observation {
  readonly outcome: RawOutcome
  readonly before: SchemaChecksum
  readonly after: SchemaChecksum
  /** The answer to the same request with its prototype names replaced by an unknown name. */
  readonly twin?: { readonly names: string; readonly status: number }
}

/**
 * A prototype name answers as an unknown name does: the very same status,
 * or, where the unknown name is refused as unknown or malformed (404, 400),
 * either of those (a name check may find `__proto__` malformed where it
 * finds `no-such-name` merely unknown).
 */
export const answersLikeUnknownName = (status: number, unknownStatus: number) =>
  status === unknownStatus || ([400, 404].includes(unknownStatus) && [400, 404].includes(status))

/** A name nothing in the service is called. */
export const unknownName = "no-such-name"

/**
 * The same request with every path parameter that names something and was
 * given an Object.prototype member's name given an unknown name instead:
 * "constructor" must be as unknown as any other name. None when the case
 * has no such parameter.
 */
export const unknownNameTwin = (input: Case): { readonly names: string; readonly twin: Case } | undefined => {
  const named = input.segments.filter(([param, segment]) => segment.kind === "prototype" && namingParams.has(param))
  if (named.length === 0) return undefined
  return {
    names: named.map(([param, segment]) => `${param} = ${segment.text.toString("latin1")}`).join(", "),
    twin: {
      ...input,
      segments: input.segments.map(([param, segment]) =>
        segment.kind === "prototype" && namingParams.has(param)
          ? [param, { kind: "hostile", text: Buffer.from(unknownName) }]
          : [param, segment]
      )
    }
  }
}

/**
 * Every rule the answer to `input` broke, each naming itself. Empty when
 * the answer is acceptable.
 */
export const violations = (
  fixture: Fixture,
  route: Route,
  input: Case,
  observed: Observation
): ReadonlyArray<string> => {
  const broken: Array<string> = []
  const { outcome } = observed
  if (outcome._tag === "Hang")
    return [`no-hang: no answer within ${outcome.afterMs} ms (${outcome.received} bytes received)`]
  if (outcome._tag === "Dropped")
    return [`no-drop: the connection ended without an answer (${outcome.code}, ${outcome.received} bytes)`]
  if (outcome._tag === "Unparseable") return [`http: the answer is not HTTP: ${JSON.stringify(outcome.head)}`]
  const { status, headers, body } = outcome.response
  const raw = toRawRequest(fixture, route, input)
  // Raw bytes in the target and lower-case methods are not HTTP: Node's parser refuses them before the app.
  const httpValid = !input.segments.some(([, segment]) => segment.kind === "rawBytes") && /^[A-Z]+$/.test(input.method)
  const method = input.method.toUpperCase()

  // A conditional read whose validator matches (If-None-Match) is answered 304 with no body: RFC 9110, 13.1.2.
  const notModified =
    status === 304 &&
    (method === "GET" || method === "HEAD") &&
    input.headers.extra.some(([name]) => name.toLowerCase() === "if-none-match") &&
    body.length === 0
  if (!(is2xx(status) || notModified || (status >= 400 && status < 500))) {
    broken.push(`status: ${status} is neither 2xx nor 4xx: ${JSON.stringify(shorten(body.toString("utf8"), 200))}`)
  }

  if (status >= 400 && method !== "HEAD") {
    const text = body.toString("utf8")
    // What Node's HTTP parser refuses never reaches the app: a bare 400 (not HTTP) or 431 (headers over 16 KiB) is that answer.
    const parserRefusal = body.length === 0 && ((!httpValid && status === 400) || status === 431)
    if (!parserRefusal) {
      const contentType = headers.get("content-type") ?? ""
      let parsed: unknown
      try {
        parsed = JSON.parse(text)
      } catch {
        parsed = undefined
      }
      const tag = Predicate.hasProperty(parsed, "_tag") ? parsed._tag : undefined
      const message = Predicate.hasProperty(parsed, "message") ? parsed.message : undefined
      if (!contentType.startsWith("application/json") || typeof tag !== "string" || typeof message !== "string") {
        broken.push(
          `error-shape: a ${status} must be JSON {_tag, message}; got ${JSON.stringify(contentType)} ${JSON.stringify(shorten(text, 200))}`
        )
      } else if (message.length > maxMessageLength) {
        broken.push(
          `short-message: the ${status} message has ${message.length} chars (max ${maxMessageLength}): ${JSON.stringify(shorten(message, 200))}`
        )
      }
      // A 412 carries the record's timeline entries since the caller's version (a bounded number): long on purpose.
      if (body.length > maxErrorBodyBytes && status !== 412)
        broken.push(`short-error: the ${status} body has ${body.length} bytes (max ${maxErrorBodyBytes})`)
      if (inputTexts(raw).some((part) => echoes(text, part))) {
        broken.push(
          `no-echo: the ${status} body repeats ${echoWindow}+ characters of the input: ${JSON.stringify(shorten(text, 200))}`
        )
      }
    }
  }

  const changed = changedTables(observed.before, observed.after)
  if (status >= 400 && changed.length > 0) broken.push(`unchanged-after-4xx: a ${status} changed ${changed.join(", ")}`)
  if ((method === "GET" || method === "HEAD") && changed.length > 0)
    broken.push(`read-only: a ${method} (${status}) changed ${changed.join(", ")}`)

  const isApi = isApiRoute(route)
  const cookieAuthenticated = route.authenticated || route.key === "auth.login"
  if (
    is2xx(status) &&
    isApi &&
    cookieAuthenticated &&
    stateChanging(method) &&
    input.principal === "admin" &&
    // A page on another origin cannot add an Authorization header without a preflight: such a request is no forgery.
    input.headers.authorization === undefined &&
    foreignOrigins.has(input.headers.origin)
  ) {
    broken.push(
      `origin: a cookie-authenticated ${method} from a foreign Origin (${input.headers.origin}) was accepted (${status})`
    )
  }
  if (is2xx(status) && isApi && route.key === "auth.login" && foreignOrigins.has(input.headers.origin)) {
    broken.push(`origin: a sign-in from a foreign Origin (${input.headers.origin}) was accepted (${status})`)
  }

  if (observed.twin !== undefined && !answersLikeUnknownName(status, observed.twin.status)) {
    broken.push(
      `prototype-name: ${observed.twin.names} answered ${status}, the same request with an unknown name answers ${observed.twin.status}`
    )
  }
  if (is2xx(status) && route.hasPayload && input.body.kind === "prototypeField") {
    broken.push(`prototype-name: a field named after an Object.prototype member was accepted (${status})`)
  }

  const bodyPresent = input.body.bytes !== undefined && input.body.bytes.length > 0
  const jsonDeclared = input.headers.contentType === undefined || jsonContentTypes.has(input.headers.contentType)
  if (
    is2xx(status) &&
    route.hasPayload &&
    jsonDeclared &&
    ["malformed", "nul", "loneSurrogate", "deep"].includes(input.body.kind)
  ) {
    broken.push(`json-body: a ${input.body.kind} body was accepted (${status}); it must be a 400`)
  }
  if (
    is2xx(status) &&
    route.hasPayload &&
    bodyPresent &&
    input.headers.contentType !== undefined &&
    notJsonContentTypes.has(input.headers.contentType)
  ) {
    broken.push(
      `json-only: a ${JSON.stringify(input.headers.contentType)} body was accepted (${status}); it must be a 415`
    )
  }

  const ifMatch = input.headers.extra.find(([name]) => name === "if-match")?.[1]
  if (is2xx(status) && route.takesIfMatch && ifMatch !== undefined && parseIfMatch(ifMatch) === undefined) {
    broken.push(
      `if-match: a malformed If-Match (${JSON.stringify(ifMatch)}) was accepted (${status}); it must be a 400`
    )
  }

  if (
    is2xx(status) &&
    route.key === "presence.heartbeat" &&
    input.segments.some(([param, segment]) => param === "id" && segment.kind === "missingRecord")
  ) {
    broken.push(
      `presence-missing-record: presence on a record that does not exist answered ${status}; it must be a 404`
    )
  }
  return broken
}
