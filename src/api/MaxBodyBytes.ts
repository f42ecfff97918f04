import { Context } from "effect"

/**
 * An endpoint's own body limit in bytes, replacing `MAX_BODY_BYTES`:
 * `.annotate(MaxBodyBytes, 16 * 1024)`.
 */
export class MaxBodyBytes extends Context.Service<MaxBodyBytes, number>()("MaxBodyBytes") {}
