import { createHash } from "node:crypto"
import type { RedisClient } from "./clientLifecycle"

/**
 * A Lua script run by its SHA (EVALSHA), sent whole (EVAL) only when the
 * server does not know it yet: after a restart, or on first use.
 */
export const luaScript = (source: string) => {
  const sha = createHash("sha1").update(source).digest("hex")
  return (client: RedisClient, keys: ReadonlyArray<string>, args: ReadonlyArray<string | number>): Promise<unknown> =>
    client.evalsha(sha, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (error instanceof Error && error.message.startsWith("NOSCRIPT"))
        return client.eval(source, keys.length, ...keys, ...args)
      throw error
    })
}
