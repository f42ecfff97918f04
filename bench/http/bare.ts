/**
 * The floor of `bench:http`: a bare `node:http` server with node-postgres
 * doing the statements the service does, and nothing else (no auth, no
 * validation beyond JSON.parse, no logging). Routes:
 *  - PATCH /records/<namespace>/<name>/<id>, body {"values": {...}}: BEGIN,
 *    SELECT ... FOR UPDATE, UPDATE ... RETURNING, the audit INSERT, COMMIT;
 *    answers the record as JSON with its ETag;
 *  - GET /timeline/<namespace>/<name>/<id>?limit=50[&after=<seq>]: the keyset
 *    query; answers { entries, nextCursor }.
 * Env: PORT, DATABASE_URL, SCHEMA (the workspace schema), POOL (default 10), AUDIT (`ledger`, the
 * default: the service's chained INSERT; `withoutChain`: the INSERT as it was before the ledger). A PATCH
 * with an `x-bench-schema` header works on that workspace schema instead.
 */
import { createServer } from "node:http"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Actor } from "../../src/api/Actor"
import type { RecordValues } from "../../src/api/Json"
import { pg } from "./pg"
import { statementsOf, timelinePage, updateUnit } from "./statements"

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL ?? "",
  max: Number(process.env.POOL ?? 10),
  application_name: "bench-http-bare"
})
const statements = statementsOf(process.env.SCHEMA ?? "")
/** The statements of other workspaces, asked for by `x-bench-schema` (the 32-workspace row of bench:http). */
const bySchema = new Map<string, typeof statements>()
const statementsFor = (request: IncomingMessage) => {
  const schema = request.headers["x-bench-schema"]
  if (typeof schema !== "string") return statements
  let found = bySchema.get(schema)
  if (found === undefined) {
    found = statementsOf(schema)
    bySchema.set(schema, found)
  }
  return found
}
const actor: Actor = { kind: "system", name: "bench:bare" }
const audit = process.env.AUDIT === "withoutChain" ? "withoutChain" : "ledger"

/** A parsed JSON body's `values`: an object (its members came from JSON.parse, so they are JSON). */
const isValues = (value: unknown): value is RecordValues =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const readBody = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const send = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers
  })
  response.end(text)
}

const camel = (row: Record<string, unknown>) => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(row)) {
    if (key === "seq" || value === null) continue
    out[key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())] = value
  }
  return out
}

const handle = async (request: IncomingMessage, response: ServerResponse) => {
  const url = new URL(request.url ?? "/", "http://bare")
  const [, kind, namespace, name, id] = url.pathname.split("/")
  const businessObject = `${namespace}/${name}`
  if (request.method === "PATCH" && kind === "records" && id !== undefined) {
    const body: unknown = JSON.parse(await readBody(request))
    const values = typeof body === "object" && body !== null && "values" in body ? body.values : null
    if (!isValues(values)) return send(response, 400, { message: "values" })
    const row = await updateUnit(pool, statementsFor(request), {
      businessObject,
      id,
      patch: values,
      actor,
      audit
    })
    return send(response, 200, camel({ ...row, version: Number(row.version) }), { etag: `"${row.version}"` })
  }
  if (request.method === "GET" && kind === "timeline" && id !== undefined) {
    const after = url.searchParams.get("after")
    const page = await timelinePage(pool, statements, {
      businessObject,
      id,
      limit: Number(url.searchParams.get("limit") ?? 50),
      ...(after === null ? {} : { afterSeq: after })
    })
    return send(response, 200, {
      entries: page.rows.map(camel),
      nextCursor: page.nextSeq === null ? null : Buffer.from(JSON.stringify([page.nextSeq])).toString("base64url")
    })
  }
  return send(response, 404, { message: "not found" })
}

const server = createServer((request, response) => {
  handle(request, response).catch((error: unknown) => send(response, 500, { message: String(error) }))
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.env.PORT), "127.0.0.1", () => process.send?.("listening"))
process.on("SIGTERM", () => {
  server.close()
  server.closeAllConnections()
  void pool.end().then(() => process.exit(0))
})
