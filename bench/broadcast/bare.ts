/**
 * The yardstick for RSS per idle stream: a bare `node:http` server that
 * answers every request with an open `text/event-stream` response (the same
 * headers and first comment as the service) and holds it until the client
 * goes away. Started by main.ts with the same Node flags and loader as the
 * service; tells its port over the IPC channel.
 */
import { createServer } from "node:http"
import type { ServerResponse } from "node:http"

const open = new Set<ServerResponse>()

const server = createServer((request, response) => {
  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-accel-buffering": "no"
  })
  response.write(": connected\n\n")
  open.add(response)
  request.on("close", () => open.delete(response))
})

server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("bare server: no TCP address")
  process.send?.({ port: address.port })
})

const stop = () => {
  for (const response of open) response.destroy()
  server.close(() => process.exit(0))
  setTimeout(() => process.exit(0), 2_000).unref()
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
process.on("disconnect", stop)
