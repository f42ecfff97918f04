import { Effect } from "effect"
import { createServer } from "node:net"

/** A free loopback port: listen on 0, read the port, close. */
export const freePort = Effect.callback<number, Error>((resume) => {
  const server = createServer()
  server.once("error", (error) => resume(Effect.fail(error)))
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(port > 0 ? Effect.succeed(port) : Effect.fail(new Error("no port"))))
  })
})
