import { Effect, Layer, Schema } from "effect"
import type { RedisClient } from "../redis/clientLifecycle"
import { PubSubUnavailable } from "../api/errors"
import { luaScript } from "../redis/luaScript"
import { RedisConnection } from "../redis/RedisConnection"
import type { LiveEditor } from "./PresenceStore"
import { PresenceStore } from "./PresenceStore"
import { fromJsonText } from "../json/fromJsonText"

/**
 * Both keys of one business object of one workspace, after the deployment's prefix. The braces make them a
 * cluster hash tag (one slot, so one script may touch both).
 * - `:lapse`: ZSET, member = JSON `[recordId, editorId]`, score = lapse time (ms);
 * - `:holder`: HASH, member -> JSON `{userId, name}`.
 */
export const presenceKeys = (prefix: string, workspace: string, businessObject: string) => {
  // The prefix has no braces (REDIS_PREFIX is checked): the hash tag stays the one below.
  const tag = `${prefix}presence:{${encodeURIComponent(workspace)}|${encodeURIComponent(businessObject)}}`
  return { lapse: `${tag}:lapse`, holder: `${tag}:holder` } as const
}

const member = (recordId: string, editorId: string) => JSON.stringify([recordId, editorId])

// Shared prelude: drop lapsed editors (score <= now) from both keys first, so
// afterwards a member present in the ZSET is live.
const sweep = `
local function sweep(now)
  local lapsed = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
  for _, m in ipairs(lapsed) do redis.call('HDEL', KEYS[2], m) end
  if #lapsed > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) end
end
local function heldByOther(member, userId)
  local holder = redis.call('HGET', KEYS[2], member)
  return holder and cjson.decode(holder).userId ~= userId
end
`

// ARGV: member, userId, holder JSON, now, lapseAt
const touchScript = `${sweep}
local now = tonumber(ARGV[4])
sweep(now)
local outcome = 'arrived'
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  if heldByOther(ARGV[1], ARGV[2]) then return 'held-by-other' end
  outcome = 'renewed'
end
redis.call('ZADD', KEYS[1], ARGV[5], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
-- Idle keys vanish once their latest editor has lapsed.
local latest = tonumber(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2])
local ttl = math.max(math.ceil(latest - now), 1)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return outcome
`

// Several heartbeats on one business object in one call (a batch, see Presence): the same steps as
// touchScript for each, in order, one sweep and one expiry for all.
// ARGV: count, then per heartbeat: member, userId, holder JSON, now, lapseAt. Returns one outcome per heartbeat.
const touchAllScript = `${sweep}
local count = tonumber(ARGV[1])
local now = 0
for i = 0, count - 1 do now = math.max(now, tonumber(ARGV[2 + i * 5 + 3])) end
sweep(now)
local outcomes = {}
for i = 0, count - 1 do
  local base = 2 + i * 5
  local member, userId = ARGV[base], ARGV[base + 1]
  local outcome = 'arrived'
  if redis.call('ZSCORE', KEYS[1], member) then
    if heldByOther(member, userId) then outcome = 'held-by-other' else outcome = 'renewed' end
  end
  if outcome ~= 'held-by-other' then
    redis.call('ZADD', KEYS[1], ARGV[base + 4], member)
    redis.call('HSET', KEYS[2], member, ARGV[base + 2])
  end
  outcomes[#outcomes + 1] = outcome
end
local latest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]
if latest then
  local ttl = math.max(math.ceil(tonumber(latest) - now), 1)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return outcomes
`

// ARGV: member, userId, now
const leaveScript = `${sweep}
sweep(tonumber(ARGV[3]))
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 'absent' end
if heldByOther(ARGV[1], ARGV[2]) then return 'held-by-other' end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 'left'
`

// ARGV: now. Returns [member, holder JSON, member, holder JSON, ...]
const listScript = `${sweep}
sweep(tonumber(ARGV[1]))
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
local out = {}
for _, m in ipairs(members) do
  local holder = redis.call('HGET', KEYS[2], m)
  if holder then
    out[#out + 1] = m
    out[#out + 1] = holder
  end
end
return out
`

const unavailable = (error: unknown) =>
  new PubSubUnavailable({ message: `redis: ${error instanceof Error ? error.message : String(error)}` })

const script = (source: string) => {
  const run = luaScript(source)
  return (client: RedisClient, keys: ReadonlyArray<string>, args: ReadonlyArray<string | number>) =>
    Effect.tryPromise({ try: () => run(client, keys, args), catch: unavailable })
}

const touch = script(touchScript)
const touchAll = script(touchAllScript)
const leave = script(leaveScript)
const list = script(listScript)

const TouchOutcomeSchema = Schema.Literals(["arrived", "renewed", "held-by-other"])
const LeaveOutcomeSchema = Schema.Literals(["left", "absent", "held-by-other"])
const TouchOutcomes = Schema.Array(TouchOutcomeSchema)
const isTouchOutcomes = Schema.is(TouchOutcomes)
const ListReply = Schema.Array(Schema.String)
const MemberJson = fromJsonText(Schema.Tuple([Schema.String, Schema.String]))
const HolderJson = fromJsonText(Schema.Struct({ userId: Schema.String, name: Schema.String }))

/** A reply that does not match the script is a bug, not an outage. */
const reply =
  <A, I>(schema: Schema.Codec<A, I>) =>
  (value: unknown) =>
    Effect.orDie(Schema.decodeUnknownEffect(schema)(value))

/** `reply` for a reply that needs no transformation: checked without a decoding effect (a heartbeat is one of these). */
const literal = <A>(schema: Schema.Codec<A>) => {
  const is = Schema.is(schema)
  const decode = reply(schema)
  return (value: unknown): Effect.Effect<A> => (is(value) ? Effect.succeed(value) : decode(value))
}
const touchOutcome = literal(TouchOutcomeSchema)
const leaveOutcome = literal(LeaveOutcomeSchema)

const make = Effect.gen(function* () {
  const { command, prefix } = yield* RedisConnection
  return PresenceStore.of({
    touch: (key, editor, nowMs, lapseAtMs) => {
      const keys = presenceKeys(prefix, key.workspace, key.businessObject)
      const holder = JSON.stringify({ userId: editor.userId, name: editor.name })
      return touch(
        command,
        [keys.lapse, keys.holder],
        [member(key.recordId, editor.editorId), editor.userId, holder, nowMs, lapseAtMs]
      ).pipe(Effect.flatMap(touchOutcome))
    },
    touchAll: (workspace, businessObject, touches) => {
      if (touches.length === 0) return Effect.succeed([])
      const keys = presenceKeys(prefix, workspace, businessObject)
      const args: Array<string | number> = [touches.length]
      for (const { recordId, editor, nowMs, lapseAtMs } of touches) {
        args.push(
          member(recordId, editor.editorId),
          editor.userId,
          JSON.stringify({ userId: editor.userId, name: editor.name }),
          nowMs,
          lapseAtMs
        )
      }
      return touchAll(command, [keys.lapse, keys.holder], args).pipe(
        Effect.flatMap((value) =>
          isTouchOutcomes(value) && value.length === touches.length
            ? Effect.succeed(value)
            : Effect.die(new Error(`presence touchAll: unexpected reply ${JSON.stringify(value)}`))
        )
      )
    },
    leave: (key, editorId, userId, nowMs) => {
      const keys = presenceKeys(prefix, key.workspace, key.businessObject)
      return leave(command, [keys.lapse, keys.holder], [member(key.recordId, editorId), userId, nowMs]).pipe(
        Effect.flatMap(leaveOutcome)
      )
    },
    list: (workspace, businessObject, nowMs) => {
      const keys = presenceKeys(prefix, workspace, businessObject)
      return list(command, [keys.lapse, keys.holder], [nowMs]).pipe(
        Effect.flatMap(reply(ListReply)),
        Effect.flatMap((flat) =>
          Effect.forEach(
            Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i] ?? "", flat[2 * i + 1] ?? ""] as const),
            ([m, h]) =>
              Effect.all([reply(MemberJson)(m), reply(HolderJson)(h)]).pipe(
                Effect.map(
                  ([[recordId, editorId], { userId, name }]): LiveEditor => ({ recordId, editorId, userId, name })
                )
              )
          )
        )
      )
    },
    kind: "redis"
  })
})

/** Presence shared by every instance: lapse times in Redis, each operation one Lua script. */
export const layer: Layer.Layer<PresenceStore, never, RedisConnection> = Layer.effect(PresenceStore, make)
