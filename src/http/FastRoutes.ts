import { Context } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"

/**
 * A route answered before the Effect HTTP stack, for requests so frequent that
 * the stack's fixed cost per request would be most of their cost (a presence
 * heartbeat every few seconds from every open form). It returns `false` for a
 * request it does not take: the stack serves it. A request it takes and cannot
 * answer with success it hands to `fallback` (the stack) unanswered, so every
 * refusal and error is the stack's one answer; it may do so only where running
 * the request twice does what running it once does.
 */
export type FastRoute = (request: IncomingMessage, response: ServerResponse, fallback: () => void) => boolean

/** The fast routes of this server, tried in order before the stack. */
export class FastRoutes extends Context.Service<FastRoutes, ReadonlyArray<FastRoute>>()("FastRoutes") {}
