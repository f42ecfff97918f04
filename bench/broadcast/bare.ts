/**
 * The floor of the broadcast bench: a bare `node:http` server that answers
 * every request with an open `text/event-stream` response (the same headers
 * and first comment as the service) and holds it until the client goes away.
 * It subscribes to the service's Redis hint channel (`BENCH_HINTS_CHANNEL`)
 * and writes each hint, encoded once as the same SSE bytes the service
 * writes, to every stream of its workspace (`?workspace=<id>`): the fan-out
 * with nothing around it. Also the yardstick for RSS per idle stream. Started
 * by main.ts with the same Node flags as the service; tells its port over the
 * IPC channel.
 */
import { createServer } from "node:http"
import type { ServerResponse } from "node:http"
import { Redis } from "ioredis"

const open = new Set<ServerResponse>()
const byWorkspace = new Map<string, Set<ServerResponse>>()

const server = createServer((request, response) => {
  const workspace = new URL(request.url ?? "/", "http://bare").searchParams.get("workspace") ?? ""
  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-accel-buffering": "no"
  })
  response.write(": connected\n\n")
  open.add(response)
  let streams = byWorkspace.get(workspace)
  if (streams === undefined) {
    streams = new Set()
    byWorkspace.set(workspace, streams)
  }
  streams.add(response)
  request.on("close", () => {
    open.delete(response)
    streams.delete(response)
  })
})

const channel = process.env.BENCH_HINTS_CHANNEL
const subscriber =
  channel === undefined ? undefined : new Redis(process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379")
if (subscriber !== undefined && channel !== undefined) {
  subscriber.on("message", (from: string, message: string) => {
    if (from !== channel) return
    const { workspace, type, data } = JSON.parse(message)
    const streams = byWorkspace.get(workspace)
    if (streams === undefined || streams.size === 0) return
    const event = Buffer.from(
      `event: ${type}\ndata: ${JSON.stringify({ businessObject: data.businessObject, businessObjectId: data.businessObjectId })}\n\n`
    )
    for (const response of streams) response.write(event)
  })
  void subscriber.subscribe(channel)
}

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("bare server: no TCP address")
  process.send?.({ port: address.port })
})

const stop = () => {
  for (const response of open) response.destroy()
  subscriber?.disconnect()
  server.close(() => process.exit(0))
  setTimeout(() => process.exit(0), 2_000).unref()
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
process.on("disconnect", stop)
