import { Schema } from "effect"

/**
 * What the orchestrator (main.ts) and the load generator (load.ts) say to
 * each other over the fork IPC channel, and the plan file the load generator
 * reads at start. Everything crossing a process boundary is decoded.
 */

export const PlanWorkspace = Schema.Struct({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  user: Schema.Struct({ id: Schema.String, name: Schema.String, email: Schema.String }),
  /** `session=<token>`, ready for a `cookie` header. */
  cookie: Schema.String,
  /** Records of `crm/company` that presence heartbeats name. */
  recordIds: Schema.Array(Schema.String)
})
export type PlanWorkspace = typeof PlanWorkspace.Type

/** The Redis a pass runs on: one server (`REDIS_URL`), or a cluster (`REDIS_CLUSTER_NODES`, `host:port,...`). */
export const BenchRedis = Schema.Union([
  Schema.TaggedStruct("Single", { url: Schema.String }),
  Schema.TaggedStruct("Cluster", { nodes: Schema.String })
])
export type BenchRedis = typeof BenchRedis.Type

export const Plan = Schema.Struct({
  databaseUrl: Schema.String,
  redis: BenchRedis,
  serverPort: Schema.Number,
  barePort: Schema.Number,
  businessObject: Schema.String,
  workspaces: Schema.Array(PlanWorkspace)
})
export type Plan = typeof Plan.Type
export const PlanJson = Schema.fromJsonString(Plan)

export const Target = Schema.Literals(["server", "bare"])
export type Target = typeof Target.Type

/** Orchestrator -> load generator. */
export const Command = Schema.Union([
  Schema.TaggedStruct("Floor", { id: Schema.Number, count: Schema.Number }),
  /** Opens streams until workspace i has `perWorkspace[i]` open streams on `target`. */
  Schema.TaggedStruct("Open", { id: Schema.Number, target: Target, perWorkspace: Schema.Array(Schema.Number) }),
  Schema.TaggedStruct("CloseAll", { id: Schema.Number, target: Target }),
  Schema.TaggedStruct("Saves", {
    id: Schema.Number,
    phase: Schema.String,
    /** Whose streams receive (and count) the hints: the service's or the bare floor server's. */
    target: Target,
    /** Saves per second, over all `workspaces`, round-robin. */
    rate: Schema.Number,
    /** Indexes into the plan's workspaces. */
    workspaces: Schema.Array(Schema.Number),
    warmupMs: Schema.Number,
    measureMs: Schema.Number,
    drainMs: Schema.Number,
    /** Sequential bare PUBLISH -> message pings per second alongside the saves (0: none). */
    floorRate: Schema.Number
  }),
  Schema.TaggedStruct("Presence", {
    id: Schema.Number,
    concurrency: Schema.Number,
    editorsPerWorkspace: Schema.Number,
    warmupMs: Schema.Number,
    measureMs: Schema.Number
  }),
  Schema.TaggedStruct("Exit", { id: Schema.Number })
])
export type Command = typeof Command.Type

export const Percentiles = Schema.Struct({
  count: Schema.Number,
  p50: Schema.Number,
  p90: Schema.Number,
  p99: Schema.Number,
  p999: Schema.Number,
  max: Schema.Number,
  mean: Schema.Number
})
export type Percentiles = typeof Percentiles.Type

export const FloorResult = Schema.Struct({ latencyMs: Percentiles })
export type FloorResult = typeof FloorResult.Type

export const OpenResult = Schema.Struct({
  open: Schema.Number,
  opened: Schema.Number,
  failed: Schema.Number,
  seconds: Schema.Number,
  firstError: Schema.optional(Schema.String)
})
export type OpenResult = typeof OpenResult.Type

export const SavesResult = Schema.Struct({
  phase: Schema.String,
  target: Target,
  streams: Schema.Number,
  targetRate: Schema.Number,
  /** Saves committed inside the measuring window, per second. */
  achievedRate: Schema.Number,
  measuredSaves: Schema.Number,
  failedSaves: Schema.Number,
  /** Saves the scheduler could not start on time because too many were in flight. */
  throttledSaves: Schema.Number,
  windowSeconds: Schema.Number,
  expectedDeliveries: Schema.Number,
  receivedDeliveries: Schema.Number,
  lostDeliveries: Schema.Number,
  /** Hints that arrived at any stream inside the measuring window, per second. */
  deliveriesPerSecond: Schema.Number,
  /** Receipts naming a record no save of this phase created (should be 0). */
  strayReceipts: Schema.Number,
  /** Receipts that arrived before the saving fiber took its commit timestamp (counted as 0 ms; should be 0). */
  earlyReceipts: Schema.Number,
  /** Streams that ended while they should have stayed open. */
  droppedStreams: Schema.Number,
  commitToReceiptMs: Percentiles,
  /** BEGIN ... COMMIT of one save, as the load generator saw it. */
  saveDurationMs: Percentiles,
  /** Bare PUBLISH -> message pings taken while the saves ran. */
  floorUnderLoadMs: Percentiles,
  /** Event-loop delay of the load generator over the window: how late it could see a receipt. */
  loopDelayMs: Schema.Struct({ p50: Schema.Number, p99: Schema.Number, max: Schema.Number }),
  /** Event-loop utilization of each reader thread over the window, percent: under 100, the readers kept up. */
  readerUtilization: Schema.Array(Schema.Number)
})
export type SavesResult = typeof SavesResult.Type

export const PresenceResult = Schema.Struct({
  concurrency: Schema.Number,
  editors: Schema.Number,
  windowSeconds: Schema.Number,
  completed: Schema.Number,
  perSecond: Schema.Number,
  failed: Schema.Number,
  firstError: Schema.optional(Schema.String),
  latencyMs: Percentiles,
  left: Schema.Number
})
export type PresenceResult = typeof PresenceResult.Type

/** Load generator -> orchestrator. */
export const Reply = Schema.Union([
  Schema.TaggedStruct("Ready", {}),
  Schema.TaggedStruct("Window", { phase: Schema.String, edge: Schema.Literals(["start", "end"]) }),
  Schema.TaggedStruct("Done", {
    id: Schema.Number,
    result: Schema.Union([
      Schema.TaggedStruct("Floor", { value: FloorResult }),
      Schema.TaggedStruct("Open", { value: OpenResult }),
      Schema.TaggedStruct("Saves", { value: SavesResult }),
      Schema.TaggedStruct("Presence", { value: PresenceResult }),
      Schema.TaggedStruct("Nothing", {})
    ])
  }),
  Schema.TaggedStruct("Failed", { id: Schema.Number, message: Schema.String })
])
export type Reply = typeof Reply.Type
export type DoneResult = Extract<Reply, { _tag: "Done" }>["result"]
