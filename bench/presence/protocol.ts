import { Schema } from "effect"

/** What main.ts and its load-generator processes (client.ts) say over the fork IPC channel; decoded on arrival. */

export const ClientCommand = Schema.Union([
  Schema.TaggedStruct("Run", {
    port: Schema.Number,
    /** Every editor's heartbeat path and the cookie of its session. */
    paths: Schema.Array(Schema.Struct({ path: Schema.String, cookie: Schema.String })),
    connections: Schema.Number,
    /** Connection i of this process starts at path `offset + i` and steps by `stride`. */
    offset: Schema.Number,
    stride: Schema.Number,
    warmupMs: Schema.Number,
    measureMs: Schema.Number
  }),
  Schema.TaggedStruct("Exit", {})
])

export const RunResult = Schema.Struct({
  /** Answered 204 inside the window. */
  completed: Schema.Number,
  failed: Schema.Number,
  firstError: Schema.optional(Schema.String),
  /** Every latency inside the window, ms. */
  latencyMs: Schema.Array(Schema.Number),
  /** This process's CPU over the window, ms. */
  cpuMs: Schema.Number,
  windowMs: Schema.Number
})
export type RunResult = typeof RunResult.Type

export const ClientReply = Schema.Union([
  Schema.TaggedStruct("Ready", {}),
  Schema.TaggedStruct("Done", { result: RunResult }),
  Schema.TaggedStruct("Failed", { message: Schema.String })
])
export type ClientReply = typeof ClientReply.Type
