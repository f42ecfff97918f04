/**
 * Preloaded into the service and the bare server by main.ts
 * (`--expose-gc --import <this file>`, plain JavaScript so that the compiled
 * service needs no TypeScript loader); changes nothing else in the process:
 * - SIGUSR2 runs a full garbage collection, so that main.ts can read the
 *   resident set size without the garbage left over from opening streams;
 * - when the orchestrator goes away (its IPC channel closes), the process
 *   stops as on SIGTERM, so that a killed bench leaves no server behind.
 */
const collect = globalThis.gc

process.on("SIGUSR2", () => {
  collect?.()
  // A second pass frees what the first one's finalizers released.
  setTimeout(() => collect?.(), 50)
})

if (process.send !== undefined) {
  process.on("disconnect", () => process.kill(process.pid, "SIGTERM"))
  // The channel must not keep a process alive that would otherwise exit.
  process.channel?.unref()
}
