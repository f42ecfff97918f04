/**
 * The floor of the broadcast bench: a bare `node:http` server that answers
 * every request with an open `text/event-stream` response (the same headers
 * and first comment as the service) and holds it until the client goes away.
 * It subscribes to the service's Redis hint channels (`BENCH_HINTS_CHANNELS`: the one channel on one
 * server; on a cluster, `BENCH_REDIS_CLUSTER_NODES` set, the 16 sharded partition channels) and writes each hint, encoded once as the same SSE bytes the service
 * writes, to every stream of its workspace (`?workspace=<id>`): the fan-out
 * with nothing around it. Also the yardstick for RSS per idle stream. Started
 * by main.ts with the same Node flags as the service; tells its port over the
 * IPC channel.
 */
import { createServer } from "node:http"
import type { ServerResponse } from "node:http"
import { Cluster, Redis } from "ioredis"

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

/** Writes one hint, encoded once as the service's SSE bytes, to every stream of its workspace. */
const fanOut = (message: string) => {
  const { workspace, type, data } = JSON.parse(message)
  const streams = byWorkspace.get(workspace)
  if (streams === undefined || streams.size === 0) return
  const event = Buffer.from(
    `event: ${type}\ndata: ${JSON.stringify({ businessObject: data.businessObject, businessObjectId: data.businessObjectId })}\n\n`
  )
  for (const response of streams) response.write(event)
}

const channels = new Set((process.env.BENCH_HINTS_CHANNELS ?? "").split(",").filter((c) => c !== ""))
const clusterNodes = process.env.BENCH_REDIS_CLUSTER_NODES
const onMessage = (from: string, message: string) => {
  if (channels.has(from)) fanOut(message)
}
/** On a cluster the service's 16 partition channels, SSUBSCRIBEd one by one (one slot each), as the service does. */
const subscriber =
  channels.size === 0
    ? undefined
    : clusterNodes !== undefined
      ? new Cluster(
          clusterNodes.split(",").map((address) => {
            const colon = address.lastIndexOf(":")
            return { host: address.slice(0, colon), port: Number(address.slice(colon + 1)) }
          }),
          { shardedSubscribers: true }
        )
      : new Redis(process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379")
if (subscriber instanceof Cluster) {
  subscriber.on("smessage", onMessage)
  for (const channel of channels) void subscriber.ssubscribe(channel)
} else if (subscriber !== undefined) {
  subscriber.on("message", onMessage)
  void subscriber.subscribe(...channels)
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
