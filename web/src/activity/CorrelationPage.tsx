import { errorMessage } from "../errors"
import { shortId } from "../labels"
import { useCorrelation } from "../queries"
import { activityPath, correlationPath, Link } from "../router"
import { describeCause } from "../timeline/describe"
import { ActivityRow } from "./ActivityRow"

/**
 * One unit of work as a story: its rows and those of the jobs and workflow
 * runs it started, grouped by unit and cause, in commit order.
 */
export const CorrelationPage = ({ correlationId }: { readonly correlationId: string }) => {
  const view = useCorrelation(correlationId)
  return (
    <section className="panel correlation" aria-labelledby="correlation-heading">
      <header className="page-title">
        <h1 id="correlation-heading" title={correlationId}>
          Unit of work {shortId(correlationId)}
        </h1>
        <Link to={activityPath}>All activity</Link>
      </header>
      {view.isError ? (
        <p className="error" role="alert">
          {errorMessage(view.error)}
        </p>
      ) : null}
      {view.isPending ? <p className="muted">Loading…</p> : null}
      {view.data !== undefined && view.data.groups.length === 0 ? (
        <p className="muted">No rows you may read were written in this unit of work.</p>
      ) : null}
      {(view.data?.groups ?? []).map((group) => (
        <section
          key={`${group.correlationId} ${group.entries[0]?.id ?? ""}`}
          className="correlation-group"
          aria-label={describeCause(group.cause)}
        >
          <h2>
            {describeCause(group.cause)}
            {group.parentCorrelationId === null ? null : (
              <>
                {" "}
                · later, in unit{" "}
                <Link to={correlationPath(group.correlationId)} title={group.correlationId}>
                  {shortId(group.correlationId)}
                </Link>
              </>
            )}
          </h2>
          <ol className="activity-list">
            {group.entries.map((entry) => (
              <ActivityRow key={entry.id} entry={entry} />
            ))}
          </ol>
        </section>
      ))}
      {view.data?.truncated === true ? (
        <p className="muted">
          Only the first {view.data.groups.reduce((n, group) => n + group.entries.length, 0)} rows are shown.
        </p>
      ) : null}
    </section>
  )
}
