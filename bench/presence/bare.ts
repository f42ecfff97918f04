/**
 * The floor of `npm run bench:presence`: a bare `node:http` server that
 * answers every `PUT /api/presence/<ns>/<name>/<id>/<editor>` with one Redis
 * `ZADD` (the editor's lapse time in a sorted set per business object) and a
 * 204. No authentication, no SQL: what a heartbeat costs at the least. Tells
 * its port over the IPC channel.
 */
import { createServer } from "node:http"
import { Redis } from "ioredis"

const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379"
const keyPrefix = `bench-presence-floor:${process.pid}:`
const redis = new Redis(redisUrl, { enableAutoPipelining: true })

const server = createServer((request, response) => {
  const parts = (request.url ?? "").split("/")
  // ["", "api", "presence", ns, name, id, editor]
  const key = `${keyPrefix}${parts[3]}/${parts[4]}`
  redis.zadd(key, Date.now() + 30_000, `${parts[5]}|${parts[6]}`).then(
    () => {
      response.writeHead(204)
      response.end()
    },
    (error: unknown) => {
      response.writeHead(503, { "content-type": "text/plain" })
      response.end(String(error))
    }
  )
})
server.keepAliveTimeout = 60_000

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("bare server: no TCP address")
  process.send?.({ port: address.port })
})

const stop = () => {
  server.close()
  server.closeAllConnections()
  void redis
    .keys(`${keyPrefix}*`)
    .then((keys) => (keys.length > 0 ? redis.del(...keys) : 0))
    .finally(() => {
      redis.disconnect()
      process.exit(0)
    })
  setTimeout(() => process.exit(0), 2_000).unref()
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
process.on("disconnect", stop)
