import { useEffect, useId, useState } from "react"
import { errorMessage } from "../errors"
import { businessObjectLabel, plural } from "../labels"
import { useBusinessObjects, useLiveFeed } from "../queries"
import { navigate, useSearch } from "../router"
import { describeActor } from "../timeline/describe"
import { useNaming } from "../titles/naming"
import type { ActivityFilters } from "./activityFilters"
import { activityFilterPath, feedFiltersOf, parseActivityFilters } from "./activityFilters"
import { ActivityRow } from "./ActivityRow"
import { actorKey } from "./actorKey"
import { entrySubject } from "./entrySubject"

/** A `datetime-local` value (local time) as the ISO instant the feed takes; empty: no bound. */
const instant = (local: string): string | undefined => {
  if (local === "") return undefined
  const date = new Date(local)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

/** An ISO instant as a `datetime-local` value (local time, to the minute). */
const local = (iso: string | undefined): string => {
  if (iso === undefined) return ""
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return ""
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`
}

/**
 * The workspace's activity, newest first and live: the newest page of the
 * change feed, older pages below ("Older"), and each change that commits
 * meanwhile at the top as it commits (the feed's SSE stream). Filters
 * (business object, actor, record, time range) live in the URL, so a
 * narrowed Activity can be linked. Only rows of business objects the viewer
 * may read are listed (the service filters them).
 */
export const ActivityPage = () => {
  const ids = { businessObject: useId(), actor: useId(), from: useId(), to: useId() }
  const businessObjects = useBusinessObjects()
  const filters = parseActivityFilters(useSearch())
  const setFilter = (name: keyof ActivityFilters, value: string | undefined) =>
    navigate(activityFilterPath({ ...filters, [name]: value }), { replace: true })
  const feed = useLiveFeed(feedFiltersOf(filters))
  const { entries, lastPage, fetchOlder, isFetchingOlder } = feed
  const fieldsOf = (businessObject: string) =>
    businessObjects.data?.find((definition) => definition.name === businessObject)?.fields
  // Actors seen so far, kept when a filter hides them: the actor list does not shrink to the one chosen.
  const [actors, setActors] = useState<ReadonlyMap<string, string>>(new Map())
  const naming = useNaming()
  useEffect(() => {
    const unseen = entries.filter((entry) => !actors.has(actorKey(entry.actor)))
    if (unseen.length === 0) return
    setActors(
      new Map([
        ...actors,
        ...unseen.map((entry) => [actorKey(entry.actor), describeActor(entry.actor, naming)] as const)
      ])
    )
  }, [entries, actors, naming])
  // A page the filters emptied while older rows remain: read on, so that "Older" always shows something.
  const readOn = lastPage !== undefined && lastPage.entries.length === 0 && lastPage.more && !isFetchingOlder
  useEffect(() => {
    if (readOn) void fetchOlder()
  }, [readOn, fetchOlder])
  const recordEntry =
    filters.record === undefined ? undefined : entries.find((e) => e.businessObjectId === filters.record)

  return (
    <section className="panel activity" aria-labelledby="activity-heading">
      <header className="page-title">
        <h1 id="activity-heading">Activity</h1>
      </header>
      <form className="filters" aria-label="Filters" onSubmit={(event) => event.preventDefault()}>
        <label htmlFor={ids.businessObject}>Business object</label>
        <select
          id={ids.businessObject}
          value={filters.businessObject ?? ""}
          onChange={(event) => setFilter("businessObject", event.target.value)}
        >
          <option value="">All</option>
          {(businessObjects.data ?? []).map((definition) => (
            <option key={definition.name} value={definition.name}>
              {plural(businessObjectLabel(definition.name))}
            </option>
          ))}
        </select>
        <label htmlFor={ids.actor}>Actor</label>
        <select id={ids.actor} value={filters.actor ?? ""} onChange={(event) => setFilter("actor", event.target.value)}>
          <option value="">Anyone</option>
          {filters.actor !== undefined && !actors.has(filters.actor) ? (
            <option value={filters.actor}>the one linked</option>
          ) : null}
          {[...actors].map(([key, label]) => (
            <option key={key} value={key}>
              {label}
            </option>
          ))}
        </select>
        <label htmlFor={ids.from}>From</label>
        <input
          id={ids.from}
          type="datetime-local"
          value={local(filters.from)}
          onChange={(event) => setFilter("from", instant(event.target.value))}
        />
        <label htmlFor={ids.to}>Before</label>
        <input
          id={ids.to}
          type="datetime-local"
          value={local(filters.to)}
          onChange={(event) => setFilter("to", instant(event.target.value))}
        />
        {filters.record === undefined ? null : (
          <span className="record-filter">
            Only{" "}
            {recordEntry === undefined
              ? "one record"
              : `${businessObjectLabel(recordEntry.businessObject).toLowerCase()} ${entrySubject(recordEntry)}`}{" "}
            <button type="button" className="link" onClick={() => setFilter("record", undefined)}>
              show all records
            </button>
          </span>
        )}
      </form>
      {feed.isError ? (
        <p className="error" role="alert">
          {errorMessage(feed.error)}
        </p>
      ) : null}
      {feed.isPending ? <p className="muted">Loading…</p> : null}
      {!feed.isPending && entries.length === 0 && !readOn ? <p className="muted">No activity.</p> : null}
      <ol className="activity-list" aria-label="Changes, newest first" aria-live="polite">
        {entries.map((entry) => (
          <ActivityRow
            key={entry.id}
            entry={entry}
            fields={fieldsOf(entry.businessObject)}
            onActor={() => setFilter("actor", actorKey(entry.actor))}
            onRecord={filters.record === undefined ? () => setFilter("record", entry.businessObjectId) : undefined}
          />
        ))}
      </ol>
      {feed.hasOlder ? (
        <button type="button" className="secondary" onClick={() => void fetchOlder()} disabled={isFetchingOlder}>
          {isFetchingOlder ? "Loading…" : "Older"}
        </button>
      ) : null}
    </section>
  )
}
