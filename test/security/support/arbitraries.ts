import { Arbitrary } from "effect"
import { testEngineToken } from "../../support/TestApp"
import type { Fixture } from "./fixture"
import type { Arb } from "../../support/arbitraries"
import { boolean, constantFrom, integer, jsonValue, oneOf, option, text, weighted } from "../../support/arbitraries"
import type { Route } from "./routes"

/** Names every plain object answers to: as a name they must be as unknown as any other. */
export const prototypeNames = [
  "constructor",
  "__proto__",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "prototype",
  "__defineGetter__",
  "isPrototypeOf"
] as const

export type Principal = "admin" | "apiKey" | "anonymous"

/** How a path segment was made: the oracles tell them apart. */
export type SegmentKind = "valid" | "prototype" | "missingRecord" | "hostile" | "rawBytes"

export interface Segment {
  readonly kind: SegmentKind
  /** As it goes into the request target (already percent-encoded where meant to be). */
  readonly text: Buffer
}

export type BodyKind =
  | "none"
  | "template"
  | "mutated"
  | "prototypeField"
  | "randomJson"
  | "malformed"
  | "nul"
  | "loneSurrogate"
  | "deep"
  | "huge"
  | "invalidUtf8"
  | "form"
  | "multipart"

export interface Body {
  readonly kind: BodyKind
  readonly bytes: Buffer | undefined
}

export type OriginChoice = "principal" | "none" | "same" | "foreign" | "null" | "sameSiteOtherPort" | "junk"

export interface HeaderChoice {
  readonly contentType: string | undefined
  readonly origin: OriginChoice
  /** Replaces (or, for anonymous, adds) the cookie header. */
  readonly cookie: string | undefined
  /** Replaces (or adds) the authorization header. */
  readonly authorization: string | undefined
  readonly extra: ReadonlyArray<readonly [string, string]>
}

/** One generated request against one route. */
export interface Case {
  readonly principal: Principal
  readonly method: string
  readonly segments: ReadonlyArray<readonly [string, Segment]>
  readonly query: string
  readonly headers: HeaderChoice
  readonly body: Body
}

const ascii = (text: string) => Buffer.from(text, "latin1")

const preview = (bytes: Buffer) => {
  const text = JSON.stringify(bytes.toString("latin1"))
  return text.length <= 160 ? text : `${text.slice(0, 160)}... (${bytes.length} bytes)`
}

/** Shown short when printed (a 300 kB body would drown a failure's report). */
const printable = <T extends object>(value: T, shown: string): T => {
  Object.defineProperty(value, "toString", { value: () => shown, enumerable: false })
  return value
}

const segmentOf = (kind: SegmentKind, bytes: Buffer): Segment =>
  printable({ kind, text: bytes }, `${kind}:${preview(bytes)}`)

const long = (min: number, max: number) => Arbitrary.map(integer(min, max), (n) => "x".repeat(n))

const hostileSegmentText = oneOf(
  constantFrom(
    "..",
    "%2E%2E",
    ".",
    "%2F",
    "a%2Fb",
    "..%2F..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%00",
    "a%00b",
    "%",
    "%zz",
    "%C3%28",
    "%ED%A0%80",
    "%FF%FE",
    "%E2%80%AE",
    "%0D%0ASet-Cookie%3A%20x%3D1",
    "%27%3B%20DROP%20TABLE%20records%3B--",
    "%5F%5Fproto%5F%5F",
    "null",
    "undefined",
    "NaN",
    "-1",
    "00000000-0000-0000-0000-000000000000",
    "%20",
    "*",
    "crm%2Fdeal%2F..",
    "%252F"
  ),
  Arbitrary.map(text(12), (chars) => encodeURIComponent(chars.replace(/[\uD800-\uDFFF]/g, "x"))),
  long(90, 3_000)
)

/** Raw bytes HTTP does not allow in a request target: the server's parser, not the app, refuses them. */
const rawSegmentBytes = constantFrom(
  Buffer.from("caf\u00e9", "utf8"),
  Buffer.from([0xff, 0xfe]),
  Buffer.from("\u{1F4A9}", "utf8"),
  Buffer.from("a b", "latin1"),
  Buffer.from([0x61, 0x00, 0x62])
)

/** The values a parameter takes when it is meant to be right. */
const validSegments = (fixture: Fixture, param: string): ReadonlyArray<string> => {
  switch (param) {
    case "namespace":
      return ["crm"]
    case "name":
      return ["deal", "company", "activity"]
    case "id":
      return Object.values(fixture.ids)
    case "action":
      return ["close", "follow-up"]
    case "businessObject":
      return ["crm%2Fdeal", "crm%2Fcompany", "crm%2Factivity"]
    case "editor":
      return ["editor-1", "editor-2"]
    case "conversationId":
      return ["conversation-1"]
    case "workspace":
      return [fixture.workspace.slug]
    case "file":
      return ["app-abc123.js", "missing.js"]
    default:
      return ["x"]
  }
}

const segment = (fixture: Fixture, param: string): Arb<Segment> => {
  const [valid = "x", ...moreValid] = validSegments(fixture, param)
  return weighted(
    {
      weight: 6,
      arbitrary: Arbitrary.map(constantFrom(valid, ...moreValid), (value) => segmentOf("valid", ascii(value)))
    },
    {
      weight: 2,
      arbitrary: Arbitrary.map(constantFrom(...prototypeNames), (value) => segmentOf("prototype", ascii(value)))
    },
    {
      weight: param === "id" ? 2 : 0,
      arbitrary: Arbitrary.Constant(segmentOf("missingRecord", ascii(missingRecordId)))
    },
    { weight: 3, arbitrary: Arbitrary.map(hostileSegmentText, (value) => segmentOf("hostile", ascii(value))) },
    { weight: 1, arbitrary: Arbitrary.map(rawSegmentBytes, (bytes) => segmentOf("rawBytes", bytes)) }
  )
}

/** An id no record has (fixed, so a seed replays the very same requests). */
export const missingRecordId = "5f0c6f5e-0000-4000-8000-00000000f022"

const queryValue = oneOf(
  constantFrom(
    "",
    "-1",
    "0",
    "1",
    "200",
    "201",
    "501",
    "1e309",
    "NaN",
    "Infinity",
    "0x10",
    "1.5",
    "%205",
    "2026-02-30T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999-14:00",
    "2026-11-23T20:10:15%2B15:59",
    "0190a3b4-0000-7000-8000-000000000e17",
    "99999999999999999999999",
    "abc",
    "newest",
    "%00",
    "__proto__",
    "%FF"
  ),
  Arbitrary.map(text(20), (chars) => encodeURIComponent(chars.replace(/[\uD800-\uDFFF]/g, "x"))),
  Arbitrary.map(text(40), (chars) => Buffer.from(chars).toString("base64url")),
  Arbitrary.map(jsonValue, (value) => Buffer.from(JSON.stringify(value) ?? "null").toString("base64url")),
  long(100, 4_000)
)

const queryName = constantFrom(
  "asOf",
  "limit",
  "cursor",
  "limit",
  "cursor",
  "__proto__",
  "constructor",
  "x",
  "limit[]",
  "__proto__[limit]",
  "limit%00",
  // The feed's filters (GET /api/audit/feed); never `wait`, which may rightly hold a request for 30 s.
  "businessObject",
  "record",
  "actor",
  "correlationId",
  "from",
  "to",
  // Reading it backwards (order=newest, before).
  "order",
  "before"
)

const query = Arbitrary.map(Arbitrary.array(Arbitrary.all([queryName, queryValue]), { maxLength: 4 }), (pairs) =>
  pairs.length === 0 ? "" : `?${pairs.map(([name, value]) => `${name}=${value}`).join("&")}`
)

const contentTypes = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json;charset=UTF-8",
  "APPLICATION/JSON",
  "application/json; charset=latin1",
  "application/json; charset=utf-16",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=fuzzboundary",
  "multipart/form-data",
  "text/plain",
  "text/plain;charset=UTF-8",
  "application/xml",
  "application/jsonx",
  "application/json-patch+json",
  "",
  "*/*"
] as const

/** Content types a JSON-only body route must refuse (415) when a body comes with them. */
export const notJsonContentTypes: ReadonlySet<string> = new Set([
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=fuzzboundary",
  "multipart/form-data",
  "text/plain",
  "text/plain;charset=UTF-8",
  "application/xml"
])

const junkCookies = oneOf(
  constantFrom(
    "session=",
    "session=%00",
    "session=\u00ff\u00fe",
    "session=a; session=b",
    "session=;;;",
    "=",
    'session="quoted"',
    "a=b; c=d; e"
  ),
  Arbitrary.map(long(100, 4_000), (chars) => `session=${chars}`),
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a header value may not carry
  Arbitrary.map(text(60), (chars) => `session=${chars.replace(/[\r\n\0-\x1f\x7f;,\uD800-\uDFFF]/g, "")}`)
)

const junkAuthorization = oneOf(
  constantFrom(
    "Bearer",
    "Bearer ",
    "Bearer  ",
    "Basic dXNlcjpwYXNz",
    "bearer ak_",
    "Bearer ak_x.y.z",
    "Bearer ak_..",
    "Token abc",
    `Bearer ${testEngineToken}`
  ),
  Arbitrary.map(long(100, 4_000), (chars) => `Bearer ak_${chars}`),
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a header value may not carry
  Arbitrary.map(text(60), (chars) => `Bearer ${chars.replace(/[\r\n\0-\x1f\x7f\uD800-\uDFFF]/g, "")}`)
)

const headers = (principal: Principal): Arb<HeaderChoice> =>
  Arbitrary.all({
    contentType: option(constantFrom(...contentTypes), { nil: undefined, freq: 4 }),
    origin: weighted<OriginChoice>(
      // A signed-in admin mostly sends its own Origin: the Origin rule must not mask the body rules.
      { weight: principal === "admin" ? 8 : 3, arbitrary: Arbitrary.Constant("principal") },
      { weight: 1, arbitrary: constantFrom("none", "same", "foreign", "null", "sameSiteOtherPort", "junk") }
    ),
    cookie: option(junkCookies, { nil: undefined, freq: 6 }),
    authorization: option(junkAuthorization, { nil: undefined, freq: 6 }),
    extra: Arbitrary.array(
      constantFrom<readonly [string, string]>(
        ["accept", "text/event-stream"],
        ["accept", "*/*"],
        ["accept", "application/x-ndjson"],
        ["accept-encoding", "gzip, deflate, br"],
        ["x-forwarded-proto", "https"],
        ["x-forwarded-for", "10.0.0.1, 127.0.0.1"],
        ["if-match", '"junk"'],
        ["if-match", '"1"'],
        ["if-match", "*"],
        ["if-match", 'W/"1"'],
        ["if-match", '"1", "2"'],
        ["if-match", "99999999999999999999"],
        ["if-none-match", '"junk"'],
        ["if-none-match", "*"],
        ["referer", "http://evil.example/"],
        ["sec-fetch-site", "cross-site"],
        ["content-encoding", "gzip"],
        ["expect", "100-continue"],
        ["x-http-method-override", "DELETE"]
      ),
      { maxLength: 2 }
    )
  })

/** The valid body of a route, as a plain value to mutate. */
const template = (fixture: Fixture, route: Route): Record<string, unknown> => {
  switch (route.key) {
    case "auth.login":
      return { workspace: fixture.workspace.slug, email: fixture.adminEmail, password: "not the password" }
    case "records.create":
      return { values: { name: "Fuzz Co", website: "https://fuzz.example" } }
    case "records.bulk":
      return { items: [{ create: { name: "Fuzz Co", website: "https://fuzz.example" } }] }
    case "records.update":
      return { values: { name: "Renamed", title: "Renamed" } }
    case "records.action":
      return { id: fixture.ids.deal }
    case "records.revert":
      return { entry: "0190a3b4-0000-7000-8000-000000000e17", mode: "undo", force: false }
    case "chat.toolCalls":
      return {
        agent: fixture.agentId,
        calls: [{ tool: "create", businessObject: "crm/activity", values: { subject: "From chat" } }]
      }
    case "engine.writes":
      return {
        workflowId: "crm/note-archived-deal",
        trigger: {
          kind: "event",
          businessObject: "crm/deal",
          businessObjectId: fixture.ids.deal,
          operation: "archived"
        },
        writes: [{ tool: "create", businessObject: "crm/activity", values: { subject: "From the engine" } }]
      }
    default:
      return {}
  }
}

/** A copy of `value` with an own property `key` (also `__proto__`, which a literal would turn into the prototype). */
const withOwnKey = (value: Record<string, unknown>, key: string, field: unknown): Record<string, unknown> => {
  const copy: Record<string, unknown> = { ...value }
  Object.defineProperty(copy, key, { value: field, enumerable: true, writable: true, configurable: true })
  return copy
}

/** The object holding field values in a template (`values`, or the first call's/write's values). */
const withValuesKey = (
  body: Record<string, unknown>,
  key: string,
  field: unknown
): Record<string, unknown> | undefined => {
  const values = body.values
  if (typeof values === "object" && values !== null && !Array.isArray(values)) {
    return { ...body, values: withOwnKey(values as Record<string, unknown>, key, field) }
  }
  for (const list of ["calls", "writes"]) {
    const writes = body[list]
    if (Array.isArray(writes) && typeof writes[0] === "object" && writes[0] !== null) {
      const first = writes[0] as Record<string, unknown>
      const inner = withValuesKey(first, key, field)
      if (inner !== undefined) return { ...body, [list]: [inner, ...writes.slice(1)] }
    }
  }
  return undefined
}

/** Puts `field` in place of the first string the body holds (or adds it as `values.name`). */
const replaceFirstString = (body: Record<string, unknown>, field: unknown): Record<string, unknown> => {
  let done = false
  const walk = (value: unknown): unknown => {
    if (done) return value
    if (typeof value === "string") {
      done = true
      return field
    }
    if (Array.isArray(value)) return value.map(walk)
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, walk(inner)]))
    }
    return value
  }
  const replaced = walk(body) as Record<string, unknown>
  return done ? replaced : { ...body, values: { name: field } }
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value) ?? "null", "utf8")

const deepArray = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`

const malformedTexts = [
  "{",
  "}",
  "[1,",
  '{"values":',
  "{'values':{}}",
  "nul",
  "tru",
  '{"a":1}x',
  '{"a":01}',
  "NaN",
  '{"a":undefined}',
  "",
  " ",
  '{"values":{"name":"x"}',
  '"unterminated',
  '{"a":"\t"}',
  "{}{}",
  '{"a":1,}'
]

const body = (fixture: Fixture, route: Route): Arb<Body> => {
  const base = template(fixture, route)
  const baseText = JSON.stringify(base)
  const of =
    (kind: BodyKind) =>
    (bytes: Buffer): Body =>
      printable({ kind, bytes }, `${kind}:${preview(bytes)}`)
  const [firstMalformed = "{", ...moreMalformed] = malformedTexts
  return weighted<Body>(
    { weight: 3, arbitrary: Arbitrary.Constant(printable<Body>({ kind: "none", bytes: undefined }, "none")) },
    { weight: 2, arbitrary: Arbitrary.Constant(of("template")(json(base))) },
    {
      weight: 4,
      arbitrary: Arbitrary.map(
        Arbitrary.all([constantFrom("extra", "wrongType", "drop"), text(12), jsonValue]),
        ([how, key, value]) => {
          if (how === "extra") return of("mutated")(json(withOwnKey(base, key, value)))
          if (how === "wrongType") return of("mutated")(json(replaceFirstString(base, value)))
          const [first] = Object.keys(base)
          const { [first ?? ""]: _dropped, ...rest } = base
          return of("mutated")(json(rest))
        }
      )
    },
    {
      weight: 2,
      arbitrary: Arbitrary.map(Arbitrary.all([constantFrom(...prototypeNames), jsonValue]), ([key, value]) => {
        const inValues = withValuesKey(base, key, value)
        return inValues === undefined
          ? of("mutated")(json(withOwnKey(base, key, value)))
          : of("prototypeField")(json(inValues))
      })
    },
    { weight: 2, arbitrary: Arbitrary.map(jsonValue, (value) => of("randomJson")(json(value))) },
    {
      weight: 3,
      arbitrary: oneOf(
        Arbitrary.map(constantFrom(firstMalformed, ...moreMalformed), (malformed) =>
          of("malformed")(Buffer.from(malformed, "utf8"))
        ),
        integer(1, Math.max(1, baseText.length - 1)).pipe(
          Arbitrary.map((cut) => baseText.slice(0, cut)),
          Arbitrary.filter((cutText) => !parses(cutText)),
          Arbitrary.map((cutText) => of("malformed")(Buffer.from(cutText, "utf8")))
        ),
        // A raw NUL inside a string: not JSON (control characters must be escaped).
        Arbitrary.Constant(of("malformed")(Buffer.from(baseText.replace(/"([^"]*)"/, '"$1\u0000"'), "utf8")))
      )
    },
    {
      weight: 2,
      arbitrary: Arbitrary.map(constantFrom("\u0000", "a\u0000b", "\u0000".repeat(10)), (nul) =>
        of("nul")(json(replaceFirstString(base, nul)))
      )
    },
    {
      weight: 2,
      arbitrary: Arbitrary.map(constantFrom("\uD800", "a\uDFFFb", "\uDBFF", "x\uDC00\uD800y"), (lone) =>
        of("loneSurrogate")(json(replaceFirstString(base, lone)))
      )
    },
    {
      weight: 2,
      arbitrary: Arbitrary.map(Arbitrary.all([integer(65, 3_000), boolean]), ([depth, arrays]) => {
        const deep = arrays ? deepArray(depth) : deepObject(depth)
        const deepText = JSON.stringify(replaceFirstString(base, "\u0001DEEP\u0001")).replace(
          '"\\u0001DEEP\\u0001"',
          deep
        )
        return of("deep")(Buffer.from(deepText, "utf8"))
      })
    },
    {
      // Only where a body is read: a client that sends 200 kB to a route that never reads it may see the answer cut short.
      weight: route.hasPayload ? 1 : 0,
      arbitrary: Arbitrary.map(
        Arbitrary.all([integer(10_000, 200_000), constantFrom("a", "\u00e9", "\u{1F4A9}", "\\")]),
        ([length, char]) => of("huge")(json(replaceFirstString(base, char.repeat(Math.ceil(length / char.length)))))
      )
    },
    {
      weight: 2,
      arbitrary: Arbitrary.map(
        constantFrom<ReadonlyArray<number>>(
          [0xff],
          [0xc3, 0x28],
          [0xed, 0xa0, 0x80],
          [0xf8, 0x88, 0x80, 0x80, 0x80],
          [0xc0, 0xaf]
        ),
        (bytes) => {
          const marker = "\u0001BYTES\u0001"
          const [before = "", after = ""] = JSON.stringify(replaceFirstString(base, marker)).split(
            "\\u0001BYTES\\u0001"
          )
          return of("invalidUtf8")(
            Buffer.concat([Buffer.from(before, "utf8"), Buffer.from(bytes), Buffer.from(after, "utf8")])
          )
        }
      )
    },
    {
      weight: 1,
      arbitrary: Arbitrary.Constant(
        of("form")(
          Buffer.from(
            Object.entries(base)
              .map(
                ([key, value]) =>
                  `${encodeURIComponent(key)}=${encodeURIComponent(typeof value === "string" ? value : JSON.stringify(value))}`
              )
              .join("&"),
            "utf8"
          )
        )
      )
    },
    {
      weight: 1,
      arbitrary: Arbitrary.Constant(
        of("multipart")(
          Buffer.from(
            `${Object.entries(base)
              .map(
                ([key, value]) =>
                  `--fuzzboundary\r\nContent-Disposition: form-data; name="${key}"\r\n\r\n${typeof value === "string" ? value : JSON.stringify(value)}\r\n`
              )
              .join("")}--fuzzboundary--\r\n`,
            "utf8"
          )
        )
      )
    }
  )
}

const parses = (text: string) => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

const anyMethods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "TRACE", "PROPFIND", "get"] as const

/** Requests against `route`: each part valid most of the time, hostile some of the time. */
export const caseFor = (fixture: Fixture, route: Route): Arb<Case> =>
  Arbitrary.all({
    principal: constantFrom<Principal>("admin", "apiKey", "anonymous"),
    method: route.method === "any" ? constantFrom<string>(...anyMethods) : Arbitrary.Constant(route.method),
    segments: Arbitrary.all(
      route.params.map((param) => Arbitrary.map(segment(fixture, param), (value) => [param, value] as const))
    ),
    query: route.hasUrlParams
      ? query
      : weighted({ weight: 4, arbitrary: Arbitrary.Constant("") }, { weight: 1, arbitrary: query }),
    body: body(fixture, route)
  }).pipe(
    Arbitrary.flatMap((partial) =>
      Arbitrary.map(headers(partial.principal), (chosen): Case => ({ ...partial, headers: chosen }))
    )
  )
