import { useMemo } from "react"
import type { AuditEntry } from "../../../src/api/AuditEntry"
import type { CorrelationGroup } from "../../../src/api/Feed"
import type { Fields } from "../../../src/api/Field"
import { errorMessage } from "../errors"
import { businessObjectLabel } from "../labels"
import { useBusinessObjects, useCorrelation } from "../queries"
import { activityPath, Link } from "../router"
import { CauseText } from "../timeline/CauseText"
import { describeActor, describeCause, describeEntryOperation } from "../timeline/describe"
import type { Naming } from "../timeline/describe"
import { useNaming } from "../titles/naming"
import { ActivityRow } from "./ActivityRow"
import type { CauseNode } from "./causeTree"
import { causeTree } from "./causeTree"
import { entrySubject } from "./entrySubject"

const none: ReadonlyArray<CorrelationGroup> = []

/** What the unit of work did, from its first row: "Updated deal Kiosk by Ada Lovelace". */
const headline = (root: AuditEntry, naming: Naming) =>
  `${describeEntryOperation(root)} ${businessObjectLabel(root.businessObject).toLowerCase()} ${entrySubject(root)} by ${describeActor(root.actor, naming)}`

interface TreeProps {
  readonly nodes: ReadonlyArray<CauseNode<AuditEntry>>
  readonly rows: ReadonlyArray<AuditEntry>
  readonly laterUnits: ReadonlySet<string>
  readonly fieldsOf: (businessObject: string) => Fields | undefined
  readonly label: string
}

const useFieldsOf = () => {
  const businessObjects = useBusinessObjects()
  return (businessObject: string) =>
    businessObjects.data?.find((definition) => definition.name === businessObject)?.fields
}

/** Rows and, nested under each, the rows it caused. */
const Tree = ({ nodes, rows, laterUnits, fieldsOf, label }: TreeProps) => (
  <ol className="activity-list cascade" aria-label={label}>
    {nodes.map(({ entry, children }) => (
      <ActivityRow
        key={entry.id}
        entry={entry}
        fields={fieldsOf(entry.businessObject)}
        unitLink={false}
        cause={
          <>
            <CauseText entry={entry} loaded={rows} recordId={entry.businessObjectId} />
            {laterUnits.has(entry.id) ? <span className="later"> · later, as a unit of its own</span> : null}
          </>
        }
      >
        {children.length === 0 ? null : (
          <Tree nodes={children} rows={rows} laterUnits={laterUnits} fieldsOf={fieldsOf} label="Caused by it" />
        )}
      </ActivityRow>
    ))}
  </ol>
)

/**
 * One unit of work as a story: titled by what its first row did, then every
 * row of it and of the jobs and workflow runs it started, each with its
 * field changes and linking to its record, drawn as a tree: a row caused by
 * another row's event nests under it.
 */
export const CorrelationPage = ({ correlationId }: { readonly correlationId: string }) => {
  const view = useCorrelation(correlationId)
  const fieldsOf = useFieldsOf()
  const groups = view.data?.groups ?? none
  const rows = useMemo(() => groups.flatMap((group) => group.entries), [groups])
  // Newest first, as the cause lookup takes them.
  const newestFirst = useMemo(() => [...rows].reverse(), [rows])
  const tree = useMemo(() => causeTree(rows), [rows])
  const laterUnits = useMemo(
    () =>
      new Set(
        groups.filter((group) => group.parentCorrelationId !== null).flatMap((group) => group.entries.map((e) => e.id))
      ),
    [groups]
  )
  const root = rows[0]
  const naming: Naming = { ...useNaming(root?.actor), titles: root?.titles }
  return (
    <section className="panel correlation" aria-labelledby="correlation-heading">
      <header className="page-title">
        <h1 id="correlation-heading" title={correlationId}>
          {root === undefined ? "Unit of work" : headline(root, naming)}
        </h1>
        <Link to={activityPath}>All activity</Link>
      </header>
      {root === undefined ? null : <p className="muted correlation-cause">{describeCause(root.cause, naming)}</p>}
      {view.isError ? (
        <p className="error" role="alert">
          {errorMessage(view.error)}
        </p>
      ) : null}
      {view.isPending ? <p className="muted">Loading…</p> : null}
      {view.data !== undefined && rows.length === 0 ? (
        <p className="muted">No rows you may read were written in this unit of work.</p>
      ) : null}
      {rows.length === 0 ? null : (
        <Tree nodes={tree} rows={newestFirst} laterUnits={laterUnits} fieldsOf={fieldsOf} label="What happened" />
      )}
      {view.data?.truncated === true ? <p className="muted">Only the first {rows.length} rows are shown.</p> : null}
    </section>
  )
}
