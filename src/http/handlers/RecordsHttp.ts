import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Effect } from "effect"
import { BusinessObjectGuard } from "../../auth/BusinessObjectGuard"
import { actorOf } from "../../auth/actorOf"
import { CurrentPrincipal } from "../../api/Principal"
import type { Permission } from "../../auth/Grants"
import { withActor } from "../../context/Frames"
import { ServedApi } from "../ServedApi"
import {
  callerOf,
  created,
  Idempotency,
  keyedRequest,
  noContent,
  ok,
  respond,
  responseOf
} from "../../idempotency/Idempotency"
import type { Answer, WriteCall } from "../../idempotency/Idempotency"
import { CurrentUnit } from "../../unitOfWork/CurrentUnit"
import { UnitOfWork } from "../../unitOfWork/UnitOfWork"
import { Records } from "../../records/Records"
import { RecordHistory } from "../../records/RecordHistory"
import { parseAsOf, RecordAsOf } from "../../api/RecordHistory"
import type { ChangedSince } from "../../api/RecordHistory"
import { StoredRecord } from "../../api/StoredRecord"
import type { WriteError } from "../../plugins/PluginRecords"
import { PreconditionFailed } from "../../api/errors"
import { parseIfMatch, versionTag } from "../../api/EntityTag"
import { ErasedRecord } from "../../api/Erasure"
import { Members } from "../../auth/Members"
import { Access } from "../../auth/Access"
import { Erasure } from "../../ledger/Erasure"
import { RecordTitles } from "../../audit/RecordTitles"
import { LinkingRecords, RecordBacklinks, RecordList } from "../../api/RecordQuery"
import { readableBusinessObjects } from "../../auth/Grants"
import type { VersionPrecondition } from "../../api/EntityTag"
import { BulkWritten } from "../../api/BulkWrite"
import type { BulkRejected } from "../../api/BulkWrite"
import { bulkWrite } from "../../records/bulkWrite"

/** Every answer with a record carries its version as its ETag. */
const withETag = (record: StoredRecord) => ({ etag: versionTag(record.version) })
const recordAnswer = ok(StoredRecord, withETag)
const createdAnswer = created(StoredRecord, withETag)
const bulkAnswer = ok(BulkWritten)
/** A record as it was carries no ETag: its version is not one a write could be made on. */
const asOfAnswer = ok(RecordAsOf)
/** An erasure's answer carries the record's version, when it is still there. */
const erasedAnswer = ok(
  ErasedRecord,
  (erased): Record<string, string> => (erased.version === null ? {} : { etag: versionTag(erased.version) })
)

/** What `If-Match` asks for; none: any version. (The header passed `IfMatch`, which takes what `parseIfMatch` parses.) */
const expectedVersion = (headers: { readonly "if-match"?: string | undefined }): VersionPrecondition =>
  (headers["if-match"] === undefined ? undefined : parseIfMatch(headers["if-match"])) ?? { _tag: "AnyVersion" }

export const RecordsHttp = HttpApiBuilder.group(ServedApi, "records", (handlers) =>
  Effect.gen(function* () {
    const records = yield* Records
    const history = yield* RecordHistory
    const guard = yield* BusinessObjectGuard
    const units = yield* UnitOfWork
    const idempotency = yield* Idempotency
    const members = yield* Members
    const erasure = yield* Erasure
    const titles = yield* RecordTitles
    const access = yield* Access
    /** Only records of business objects the caller may read are named by their titles. */
    const readable = Effect.map(access.grants, readableBusinessObjects)

    /** The record answered with its title and its links' (read in the write's own unit, so new links are seen). */
    const titled = <E, R>(effect: Effect.Effect<StoredRecord, E, R>) =>
      Effect.flatMap(effect, (record) =>
        Effect.flatMap(CurrentUnit, (unit) =>
          Effect.flatMap(readable, (may) => titles.titledRecord(unit.workspace, record, may))
        )
      )

    /**
     * A 412 whose entries name what they link to as a timeline page does: a
     * link the other writer removed is still shown by its title.
     */
    const titledPrecondition = (error: PreconditionFailed) =>
      Effect.gen(function* () {
        const unit = yield* CurrentUnit
        const entries = yield* titles.titledEntries(unit.workspace, error.entries, yield* readable)
        return yield* new PreconditionFailed({
          message: error.message,
          currentVersion: error.currentVersion,
          entries,
          moreEntries: error.moreEntries
        })
      })

    const authorize = (businessObject: string, permission: Permission) =>
      Effect.map(guard.require(businessObject, permission), ({ principal }) => principal.workspace)

    /**
     * A write: one unit of work in the principal's workspace, with the
     * principal as actor, run once per `Idempotency-Key` when it has one.
     */
    const write = <A, I, E extends WriteError | PreconditionFailed | ChangedSince | BulkRejected>(
      businessObject: string,
      call: WriteCall,
      answer: Answer<A, I>,
      effect: Effect.Effect<A, E, CurrentUnit | CurrentPrincipal>
    ) =>
      Effect.gen(function* () {
        const workspace = yield* authorize(businessObject, "update")
        const principal = yield* CurrentPrincipal
        const inUnit = Effect.provideService(effect, CurrentPrincipal, principal)
        const once = idempotency.run(keyedRequest(callerOf(principal), call), answer, inUnit)
        const result = yield* units.run(workspace, once).pipe(withActor(actorOf(principal)))
        return yield* responseOf(answer, result)
      })

    /** A write on the record `id` that first checks its version against `If-Match`, in the same unit. */
    const writeOn = <A, I, E extends WriteError | ChangedSince>(
      businessObject: string,
      id: string,
      call: WriteCall & { readonly headers: { readonly "if-match"?: string | undefined } },
      answer: Answer<A, I>,
      effect: Effect.Effect<A, E, CurrentUnit | CurrentPrincipal>
    ) =>
      write(
        businessObject,
        call,
        answer,
        Effect.andThen(
          records
            .requireVersion(businessObject, id, expectedVersion(call.headers))
            .pipe(Effect.catchTag("PreconditionFailed", titledPrecondition)),
          effect
        )
      )

    return handlers
      .handle("create", (call) => {
        const businessObject = `${call.params.namespace}/${call.params.name}`
        const create = titled(records.create(businessObject, call.payload.values, { draft: call.payload.draft }))
        return write(businessObject, call, createdAnswer, create)
      })
      .handle("bulk", (call) => {
        const businessObject = `${call.params.namespace}/${call.params.name}`
        return write(businessObject, call, bulkAnswer, bulkWrite(records, businessObject, call.payload.items))
      })
      .handle("list", ({ params, query }) =>
        Effect.gen(function* () {
          const businessObject = `${params.namespace}/${params.name}`
          const workspace = yield* authorize(businessObject, "read")
          const page = yield* records.listPage(workspace, businessObject, query)
          return new RecordList({
            ...page,
            records: yield* titles.titledRecords(workspace, page.records, yield* readable)
          })
        })
      )
      .handle("backlinks", ({ params, query }) =>
        Effect.gen(function* () {
          const businessObject = `${params.namespace}/${params.name}`
          const workspace = yield* authorize(businessObject, "read")
          const backlinks = yield* records.backlinks(workspace, businessObject, params.id, query.limit, (linking) =>
            access.can(linking, "read")
          )
          const may = yield* readable
          return new RecordBacklinks({
            groups: yield* Effect.forEach(backlinks.groups, (group) =>
              Effect.map(
                titles.titledRecords(workspace, group.records, may),
                (titledRecords) => new LinkingRecords({ ...group, records: titledRecords })
              )
            )
          })
        })
      )
      .handle("get", ({ params, query }) =>
        Effect.gen(function* () {
          const businessObject = `${params.namespace}/${params.name}`
          const workspace = yield* authorize(businessObject, "read")
          // The parameter passed `AsOf`, which takes what `parseAsOf` parses.
          const point = query.asOf === undefined ? undefined : parseAsOf(query.asOf)
          if (point !== undefined) {
            const then = yield* history.asOf(workspace, businessObject, params.id, point)
            const linked = yield* titles.titlesOfValues(workspace, businessObject, then.values, yield* readable)
            const title = titles.titleOf(businessObject, then.values)
            return yield* respond(asOfAnswer, new RecordAsOf({ ...then, title, titles: linked }))
          }
          const record = yield* records.get(workspace, businessObject, params.id)
          return yield* respond(recordAnswer, yield* titles.titledRecord(workspace, record, yield* readable))
        })
      )
      .handle("revert", (call) => {
        const businessObject = `${call.params.namespace}/${call.params.name}`
        const { entry, mode, force } = call.payload
        return writeOn(
          businessObject,
          call.params.id,
          call,
          recordAnswer,
          titled(history.revert(businessObject, call.params.id, { entry: entry.toLowerCase(), mode, force }))
        )
      })
      .handle("update", (call) => {
        const businessObject = `${call.params.namespace}/${call.params.name}`
        return writeOn(
          businessObject,
          call.params.id,
          call,
          recordAnswer,
          titled(records.update(businessObject, call.params.id, call.payload.values))
        )
      })
      .handle("remove", (call) => {
        const businessObject = `${call.params.namespace}/${call.params.name}`
        return writeOn(businessObject, call.params.id, call, noContent, records.remove(businessObject, call.params.id))
      })
      .handle("erase", (call) => {
        const businessObject = `${call.params.namespace}/${call.params.name}`
        const { id } = call.params
        return Effect.andThen(
          Effect.flatMap(CurrentPrincipal, members.requireAdmin),
          writeOn(
            businessObject,
            id,
            call,
            erasedAnswer,
            erasure.erase({ businessObject, id, fields: call.payload.fields })
          )
        )
      })
      .handle("publish", (call) => {
        const businessObject = `${call.params.namespace}/${call.params.name}`
        return writeOn(
          businessObject,
          call.params.id,
          call,
          recordAnswer,
          titled(records.publish(businessObject, call.params.id))
        )
      })
      .handle("archive", (call) => {
        const businessObject = `${call.params.namespace}/${call.params.name}`
        return writeOn(
          businessObject,
          call.params.id,
          call,
          recordAnswer,
          titled(records.archive(businessObject, call.params.id))
        )
      })
      .handle("restore", (call) => {
        const businessObject = `${call.params.namespace}/${call.params.name}`
        return writeOn(
          businessObject,
          call.params.id,
          call,
          recordAnswer,
          titled(records.restore(businessObject, call.params.id))
        )
      })
      .handle("action", (call) => {
        const businessObject = `${call.params.namespace}/${call.params.name}`
        return writeOn(
          businessObject,
          call.payload.id,
          call,
          recordAnswer,
          titled(records.runAction(businessObject, call.params.action, call.payload.id))
        )
      })
  })
)
