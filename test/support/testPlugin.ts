import { Effect } from "effect"
import { Conflict } from "../../src/api/errors"
import { field } from "../../src/api/Field"
import type { Plugin } from "../../src/plugins/Plugin"
import { PluginRecords } from "../../src/plugins/PluginRecords"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { crm } from "../../src/plugins/crm"

/** Keys of the `test/hold` jobs running now (in their unit, after their write). */
export const holdingJobs = new Set<string>()

/** When each run of the job `test/flaky` started, by its payload's `key` (milliseconds). */
export const flakyRuns = new Map<string, Array<number>>()

/**
 * A plugin for tests that need to break a unit of work in the middle or make
 * big ones: a widget created with `fail: true` makes its listener write a
 * crm/activity and then fail; the action `spawn` creates `count` widgets.
 * The job `test/flaky` writes a widget and then fails, until its
 * `failures`-th retry succeeds; `test/doomed` writes a widget and always fails;
 * `test/hold` writes a widget and then holds its unit (and its locks) open
 * until it is interrupted.
 */
export const testPlugin: Plugin = {
  namespace: "test",
  label: "Test",
  businessObjects: {
    widget: {
      label: "Widget",
      title: "name",
      fields: { name: field.string, count: field.number, fail: field.boolean },
      actions: {
        spawn: {
          label: "Spawn widgets",
          description: "Create `count` widgets in one unit",
          run: (target) =>
            Effect.gen(function* () {
              const records = yield* PluginRecords
              const count = typeof target.values.count === "number" ? target.values.count : 0
              for (let i = 0; i < count; i++) yield* records.create("test/widget", { name: `spawned ${i}` })
              return target
            })
        }
      }
    }
  },
  listeners: [
    {
      name: "test/refuse-failing-widgets",
      label: "Refuse failing widgets",
      businessObject: "test/widget",
      operations: ["created"],
      run: (event) =>
        Effect.gen(function* () {
          if (event.after?.fail !== true) return
          yield* (yield* PluginRecords).create("crm/activity", { subject: "written before the failure" })
          return yield* new Conflict({ message: "widget refused by its listener" })
        })
    }
  ],
  jobs: {
    flaky: {
      label: "Flaky",
      description: "Fails its first `failures` runs",
      run: (payload) =>
        Effect.gen(function* () {
          const key = String(payload.key)
          const runs = flakyRuns.get(key) ?? []
          runs.push(Date.now())
          flakyRuns.set(key, runs)
          yield* (yield* PluginRecords).create("test/widget", { name: `${key} run ${runs.length}` })
          if (runs.length <= Number(payload.failures))
            return yield* new Conflict({ message: `flaky run ${runs.length} failed` })
        })
    },
    hold: {
      label: "Hold",
      description: "Writes a widget, then never ends",
      run: (payload) =>
        Effect.gen(function* () {
          const key = String(payload.key)
          yield* (yield* PluginRecords).create("test/widget", { name: `held ${key}` })
          holdingJobs.add(key)
          return yield* Effect.never
        }).pipe(Effect.ensuring(Effect.sync(() => holdingJobs.delete(String(payload.key)))))
    },
    doomed: {
      label: "Doomed",
      description: "Always fails",
      run: () =>
        Effect.gen(function* () {
          yield* (yield* PluginRecords).create("test/widget", { name: "doomed" })
          return yield* new Conflict({ message: "doomed to fail" })
        })
    }
  }
}

export const TestPlugins = PluginRegistry.layerWith([crm, testPlugin])
