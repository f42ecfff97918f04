import type { Server, ServerResponse } from "node:http"
import { Server as NetServer } from "node:net"
import type { Socket } from "node:net"
import { Effect } from "effect"

/**
 * How long a connection idle when the drain begins stays open. A request a
 * client sent just before the signal may still sit unread in the socket,
 * and Node counts that connection as idle: closed at once, the client would
 * see a reset instead of its answer. Within this grace such a request is
 * read and answered (with `Connection: close`).
 */
const defaultIdleGraceMillis = 500

/**
 * Watches `server`'s requests and returns its drain step (see
 * `GracefulShutdown`): stop accepting connections, answer every request in
 * flight and every request that still arrives on an open keep-alive
 * connection, each with `Connection: close`, so that each connection closes
 * after its current response; idle connections close after a short grace
 * (`idleGraceMillis`), and a connection whose response was already under
 * way (its headers out, so without `Connection: close`) the same grace after
 * that response ends, unless another request came on it. It completes
 * when the server has no connection left (broadcast streams included: their
 * sockets count too, and their own step ends them). Interrupted (the
 * deadline), it destroys every connection left.
 *
 * @effect/platform-node closes the server only after it has stopped handing
 * requests to the app, and Node's `close` waits for busy keep-alive
 * connections, which may carry a next request: with nobody to answer it, the
 * close could wait for minutes. This step runs first, while the app still answers.
 */
export const drainHttpServer = (
  server: Server,
  idleGraceMillis: number = defaultIdleGraceMillis
): Effect.Effect<void> => {
  let draining = false
  // The open connections and the last response of each, held weakly: a response in flight is
  // held by its request's fiber anyway, and a broadcast stream's response (detached from its
  // socket, it never emits "close" or "finish") must not live as long as the stream.
  const connections = new Set<Socket>()
  const lastResponse = new WeakMap<Socket, WeakRef<ServerResponse>>()

  const closeAfter = (response: ServerResponse) => {
    if (!response.headersSent) return response.setHeader("connection", "close")
    // Headers already out (a streamed body): the connection turns idle when it ends. Only this one closes,
    // after the grace: closing every idle connection then (as `closeIdleConnections` would) reset the
    // requests other clients had just sent, before the grace was over, under load several per drain.
    const socket = response.socket
    if (socket === null) return
    response.once("close", () => {
      const grace = setTimeout(() => {
        if (lastResponse.get(socket)?.deref() === response) socket.destroy()
      }, idleGraceMillis)
      socket.once("close", () => clearTimeout(grace))
    })
  }

  server.on("connection", (socket: Socket) => {
    connections.add(socket)
    socket.once("close", () => connections.delete(socket))
  })
  // Before the app's own listener, so that the header is set before the app answers.
  server.prependListener("request", (request, response: ServerResponse) => {
    lastResponse.set(request.socket, new WeakRef(response))
    if (draining) closeAfter(response)
  })

  return Effect.callback<void>((resume) => {
    draining = true
    for (const socket of connections) {
      const response = lastResponse.get(socket)?.deref()
      if (response !== undefined && !response.writableEnded) closeAfter(response)
    }
    // Stops listening (the plain net close: http's own would close idle connections at once);
    // calls back once no connection is left.
    NetServer.prototype.close.call(server, () => resume(Effect.void))
    const grace = setTimeout(() => server.closeIdleConnections(), idleGraceMillis)
    return Effect.sync(() => {
      clearTimeout(grace)
      server.closeAllConnections()
    })
  })
}
