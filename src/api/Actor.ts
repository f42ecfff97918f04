import { Schema } from "effect"

/** Who caused a change (spec, "Actor"). */
export const UserActor = Schema.Struct({
  kind: Schema.Literal("user"),
  id: Schema.String,
  name: Schema.String,
  email: Schema.String
})

export const ServiceAccountActor = Schema.Struct({
  kind: Schema.Literal("service-account"),
  id: Schema.String,
  name: Schema.String
})

/** Seeders (`seeder:<plugin>`) and workflow runs (`workflow:<id>`). */
export const SystemActor = Schema.Struct({
  kind: Schema.Literal("system"),
  name: Schema.String
})

export const AgentActor = Schema.Struct({
  kind: Schema.Literal("agent"),
  id: Schema.String,
  name: Schema.String
})

export const Actor = Schema.Union([UserActor, ServiceAccountActor, SystemActor, AgentActor]).annotate({
  identifier: "Actor"
})
export type Actor = typeof Actor.Type
