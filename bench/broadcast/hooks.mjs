/**
 * Preloaded into the service and the bare server by main.ts
 * (`--expose-gc --import <this file>`, plain JavaScript so that the compiled
 * service needs no TypeScript loader); changes nothing else in the process:
 * - SIGUSR2 runs a full garbage collection, so that main.ts can read the
 *   resident set size without the garbage left over from opening streams;
 * - when the orchestrator goes away (its IPC channel closes), the process
 *   stops as on SIGTERM, so that a killed bench leaves no server behind;
 * - an IPC message `{ heapSnapshot: <path> }` (main.ts `--heap-snapshots`)
 *   writes a heap snapshot there after a full GC and answers `{ heapSnapshot: <path> }`;
 * - an IPC message `{ memory: true }` answers `{ memory: <line> }`: where the
 *   resident memory is (`process.memoryUsage()`, V8's heap spaces), in MiB.
 */
import { getHeapSpaceStatistics, writeHeapSnapshot } from "node:v8"

const mib = (bytes) => (bytes / 1048576).toFixed(1)
const memoryLine = () => {
  const usage = process.memoryUsage()
  const spaces = getHeapSpaceStatistics()
    .filter((space) => space.physical_space_size > 0)
    .map((space) => `${space.space_name} ${mib(space.space_used_size)}/${mib(space.physical_space_size)}`)
  return (
    `rss ${mib(usage.rss)}, heap used ${mib(usage.heapUsed)} of ${mib(usage.heapTotal)}, external ${mib(usage.external)} ` +
    `(array buffers ${mib(usage.arrayBuffers)}); spaces used/physical: ${spaces.join(", ")}`
  )
}
const collect = globalThis.gc

process.on("SIGUSR2", () => {
  collect?.()
  // A second pass frees what the first one's finalizers released.
  setTimeout(() => collect?.(), 50)
})

if (process.send !== undefined) {
  process.on("message", (message) => {
    if (typeof message !== "object" || message === null) return
    if (message.memory === true) return process.send?.({ memory: memoryLine() })
    if (typeof message.heapSnapshot !== "string") return
    collect?.()
    writeHeapSnapshot(message.heapSnapshot)
    process.send?.({ heapSnapshot: message.heapSnapshot })
  })
  process.on("disconnect", () => process.kill(process.pid, "SIGTERM"))
  // The channel must not keep a process alive that would otherwise exit.
  process.channel?.unref()
}
