import { statSync } from "node:fs"
import { resolve } from "node:path"
import { HttpServerResponse } from "effect/http"
import { Console, Effect, Option } from "effect"
import { BulkWrite, BulkWritten, maxBulkItems } from "../../api/BulkWrite"
import type { BulkRejected } from "../../api/BulkWrite"
import { BadRequest, UnprocessableEntity } from "../../api/errors"
import { withActor } from "../../context/Frames"
import { Idempotency, ok } from "../../idempotency/Idempotency"
import { bulkWrite } from "../../records/bulkWrite"
import { Records } from "../../records/Records"
import { Workspaces } from "../../tenancy/Workspaces"
import { UnitOfWork } from "../../unitOfWork/UnitOfWork"
import { AdminInvocation } from "./AdminInvocation"
import { operatorActor } from "./auditErase"
import { BadImportLine, importBatches } from "./importFile"
import type { ImportBatch } from "./importFile"

/** Whose keys an import's are (the `principal` of `idempotency_keys`): no HTTP caller's ever meet them. */
export const importCaller = "admin:records-import"

const redrawMs = 200
const width = 30
const grouped = (n: number) => n.toLocaleString("en-US")

/** The bar of an import: how much of the file is read, the records so far and their rate. */
export const importProgressLine = (records: number, bytesRead: number, bytes: number, elapsedMs: number) => {
  const done = bytes > 0 ? Math.min(1, bytesRead / bytes) : 1
  const filled = Math.round(done * width)
  const rate = elapsedMs > 0 ? Math.round((records * 1_000) / elapsedMs) : 0
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${Math.floor(done * 100)}%  ${grouped(records)} records  ${grouped(rate)} records/s`
}

const refusedLines = (batch: ImportBatch, rejected: BulkRejected) =>
  rejected.items.slice(0, 20).map((item) => `line ${batch.lines[item.index] ?? "?"}: ${item.message}`)

/**
 * `admin records import`: an NDJSON file (a create's values, or
 * `{id, values, ifMatch?}` for an update, per line) through the bulk write,
 * in batches of 1,000 lines, each one unit of work as the operator, under an
 * `Idempotency-Key` derived from the file up to the batch's last line
 * (importFile.ts): an import run again after an interruption or a refused
 * batch replays the batches already imported and goes on from the first
 * that is not. Stops at the first refused batch, naming its lines.
 */
export const recordsImport = ({
  businessObject,
  file,
  workspace
}: {
  readonly workspace: string
  readonly businessObject: string
  readonly file: string
}) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const records = yield* Records
    const units = yield* UnitOfWork
    const idempotency = yield* Idempotency
    yield* records.businessObjectOf(businessObject)
    const { cwd, progress } = yield* AdminInvocation
    const path = resolve(cwd, file)
    const bytes = yield* Effect.try({
      try: () => statSync(path).size,
      catch: () => new BadRequest({ message: `cannot read ${file}` })
    })
    const batches = importBatches(path, `${target.id}\n${businessObject}`, maxBulkItems)
    const started = Date.now()
    let drawn = 0
    const totals = { written: 0, replayed: 0, batches: 0 }
    const draw = (bytesRead: number, last: boolean) =>
      Effect.sync(() => {
        if (!progress || (!last && Date.now() - drawn < redrawMs)) return
        drawn = Date.now()
        const line = importProgressLine(totals.written + totals.replayed, bytesRead, bytes, Date.now() - started)
        process.stderr.write(`\r${line}${last ? "\n" : ""}`)
      })
    for (;;) {
      const next = yield* Effect.tryPromise({
        try: () => batches.next(),
        catch: (error) =>
          new BadRequest({
            message:
              error instanceof BadImportLine
                ? `${file}, ${error.message}: nothing from this line's batch on was imported; fix it and run the same command again`
                : `cannot read ${file}: ${String(error)}`
          })
      })
      if (next.done === true) break
      const batch = next.value
      const request = {
        caller: importCaller,
        key: batch.key,
        method: "POST",
        path: `/api/records/${businessObject}/bulk`,
        payload: new BulkWrite({ items: batch.items })
      }
      const result = yield* units
        .run(
          target,
          idempotency.run(Option.some(request), ok(BulkWritten), bulkWrite(records, businessObject, batch.items))
        )
        .pipe(
          withActor(operatorActor),
          Effect.catchTag("BulkRejected", (rejected) =>
            Effect.andThen(
              Effect.forEach(refusedLines(batch, rejected), (line) => Console.error(line), { discard: true }),
              new UnprocessableEntity({
                message: `${file}: batch ${batch.number} (lines ${batch.lines[0]}-${batch.lines.at(-1)}) refused, ${rejected.items.length} of its items (see above); it and the lines after it were not imported, the ${grouped(totals.written + totals.replayed)} records before it were: fix the lines and run the same command again`
              })
            )
          )
        )
      const replayed = HttpServerResponse.isHttpServerResponse(result)
      if (replayed) totals.replayed += batch.items.length
      else totals.written += batch.items.length
      totals.batches++
      if (progress) yield* draw(batch.bytesRead, false)
      else
        yield* Console.error(
          `batch ${batch.number}: lines ${batch.lines[0]}-${batch.lines.at(-1)}, ${grouped(batch.items.length)} records ${replayed ? "already imported" : "written"}`
        )
    }
    yield* draw(bytes, true)
    const seconds = (Date.now() - started) / 1_000
    yield* Console.log(
      `imported ${file} into ${target.slug} ${businessObject}: ${grouped(totals.written)} records written, ${grouped(totals.replayed)} already imported (${totals.batches} batches, ${seconds.toFixed(1)} s)`
    )
  })
