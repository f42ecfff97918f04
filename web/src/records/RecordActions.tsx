import { useState } from "react"
import type { Fields } from "../../../src/api/Field"
import type { StoredRecord } from "../../../src/client"
import { VersionConflictError } from "../../../src/client"
import type { RecordCommand } from "../../../src/client/react"
import { ConflictView } from "../conflict/ConflictView"
import { errorMessage } from "../errors"
import { own } from "../../../src/api/own"
import { humanize } from "../labels"
import { useRecordCommand, useRefetchBusinessObject } from "../queries"
import { listPath, navigate } from "../router"

interface Props {
  readonly businessObject: string
  readonly record: StoredRecord
  readonly fields: Fields
  /** The plugin's actions on this business object (`close`, `follow-up`). */
  readonly actions: ReadonlyArray<string>
  /** What a person reads for each action ("Close deal"), by name; the name is on hover. */
  readonly actionLabels?: { readonly [name: string]: string } | undefined
  /** "deal" */
  readonly typeLabel: string
}

type Step = Exclude<RecordCommand["kind"], "action">

const stepDone: Record<Step, string> = {
  publish: "published",
  archive: "archived",
  restore: "restored",
  remove: "deleted"
}

/**
 * What a person is told after an action: one that wrote nothing to the
 * record (its version is the one sent) only queued work ("Follow up"
 * enqueues a job), whose result shows later in Activity.
 */
const actionOutcome = (label: string, sentVersion: number | "*" | undefined, result: unknown): string => {
  const version =
    typeof result === "object" && result !== null && "version" in result && typeof result.version === "number"
      ? result.version
      : undefined
  return version !== undefined && version === sentVersion
    ? `${label}: queued. It runs in the background; what it does will show in Activity.`
    : `${label}: done.`
}

/**
 * What can be done to the record besides editing it, by its state: publish
 * a draft; run the plugin's actions on an operational record and archive
 * it; restore an archived one; delete any (after a confirmation). Each is
 * sent with `If-Match` on the version shown; a record that moved on shows
 * the conflict view. Only shown to a viewer who may update the type.
 */
export const RecordActions = ({ businessObject, record, fields, actions, actionLabels, typeLabel }: Props) => {
  const labelOf = (action: string) =>
    (actionLabels === undefined ? undefined : own(actionLabels, action)) ?? humanize(action)
  const command = useRecordCommand(businessObject)
  const refetch = useRefetchBusinessObject(businessObject)
  const [confirming, setConfirming] = useState(false)
  const [last, setLast] = useState<RecordCommand | undefined>(undefined)
  const [done, setDone] = useState<string | undefined>(undefined)
  const conflict = command.error instanceof VersionConflictError ? command.error : undefined

  const run = (next: RecordCommand) => {
    setLast(next)
    setConfirming(false)
    setDone(undefined)
    command.mutate(next, {
      onSuccess: (result) => {
        if (next.kind === "remove") navigate(listPath(businessObject), { replace: true })
        if (next.kind === "action") setDone(actionOutcome(humanize(next.action), next.ifMatch, result))
      }
    })
  }
  const step = (kind: Step) => () => run({ kind, id: record.id, ifMatch: record.version })
  const busy = command.isPending
  const refused =
    last === undefined
      ? "It was not done"
      : last.kind === "action"
        ? `${labelOf(last.action)} was not run`
        : `The ${typeLabel} was not ${stepDone[last.kind]}`

  return (
    <section className="record-actions" aria-label="Record actions">
      {record.state === "draft" ? (
        <button type="button" onClick={step("publish")} disabled={busy}>
          Publish
        </button>
      ) : null}
      {record.state === "operational"
        ? actions.map((action) => (
            <button
              key={action}
              type="button"
              className="secondary"
              title={action}
              disabled={busy}
              onClick={() => run({ kind: "action", action, id: record.id, ifMatch: record.version })}
            >
              {labelOf(action)}
            </button>
          ))
        : null}
      {record.state === "operational" ? (
        <button type="button" className="secondary" onClick={step("archive")} disabled={busy}>
          Archive
        </button>
      ) : null}
      {record.state === "archived" ? (
        <button type="button" className="secondary" onClick={step("restore")} disabled={busy}>
          Restore
        </button>
      ) : null}
      {confirming ? (
        <span className="confirm" role="alertdialog" aria-label={`Delete this ${typeLabel}?`}>
          Delete this {typeLabel} for good?{" "}
          <button type="button" className="danger" onClick={step("remove")} disabled={busy}>
            Yes, delete
          </button>{" "}
          <button type="button" className="secondary" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </span>
      ) : (
        <button type="button" className="secondary danger" onClick={() => setConfirming(true)} disabled={busy}>
          Delete
        </button>
      )}
      {conflict !== undefined && last !== undefined ? (
        <ConflictView
          conflict={conflict}
          fields={fields}
          current={record.values}
          mine={[]}
          refused={refused}
          onKeepMine={(version) => run({ ...last, ifMatch: version })}
          onTakeTheirs={() => {
            command.reset()
            void refetch()
          }}
          busy={busy}
        />
      ) : command.isError ? (
        <p className="error" role="alert">
          {errorMessage(command.error)}
        </p>
      ) : null}
      {done !== undefined ? (
        <p className="action-outcome" role="status" aria-label="Action outcome">
          {done}
        </p>
      ) : null}
    </section>
  )
}
