import { useEffect, useId, useState } from "react"
import type { FeedFilters } from "../../../src/client/react"
import { errorMessage } from "../errors"
import { businessObjectLabel, plural } from "../labels"
import { useBusinessObjects, useFeedPages } from "../queries"
import { describeActor } from "../timeline/describe"
import { ActivityRow } from "./ActivityRow"
import { actorKey } from "./actorKey"

/** A `datetime-local` value (local time) as the ISO instant the feed takes; empty: no bound. */
const instant = (local: string): string | undefined => {
  if (local === "") return undefined
  const date = new Date(local)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

/** Filters with the empty ones left out: they are the query's key. */
const cleaned = (filters: Record<string, string | undefined>): FeedFilters =>
  Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined && value !== ""))

/**
 * The workspace's activity: the change feed, oldest first, with its filters
 * (business object, actor, time range), a page at a time, each row linking
 * to its record and to its unit of work. Only rows of business objects the
 * viewer may read are listed (the service filters them).
 */
export const ActivityPage = () => {
  const ids = { businessObject: useId(), actor: useId(), from: useId(), to: useId() }
  const businessObjects = useBusinessObjects()
  const [businessObject, setBusinessObject] = useState("")
  const [actor, setActor] = useState("")
  const [from, setFrom] = useState("")
  const [to, setTo] = useState("")
  const filters = cleaned({ businessObject, actor, from: instant(from), to: instant(to) })
  const feed = useFeedPages(filters)
  const pages = feed.data?.pages ?? []
  const entries = pages.flatMap((page) => page.entries)
  const last = pages.at(-1)
  // Actors seen so far, kept when a filter hides them: the actor list does not shrink to the one chosen.
  const [actors, setActors] = useState<ReadonlyMap<string, string>>(new Map())
  useEffect(() => {
    const unseen = entries.filter((entry) => !actors.has(actorKey(entry.actor)))
    if (unseen.length === 0) return
    setActors(
      new Map([...actors, ...unseen.map((entry) => [actorKey(entry.actor), describeActor(entry.actor)] as const)])
    )
  }, [entries, actors])
  // A page the filters emptied while more rows follow: read on, so that "load more" always shows something new.
  const { fetchNextPage, isFetching } = feed
  const readOn = last !== undefined && last.entries.length === 0 && last.more && !isFetching
  useEffect(() => {
    if (readOn) void fetchNextPage()
  }, [readOn, fetchNextPage])

  return (
    <section className="panel activity" aria-labelledby="activity-heading">
      <header className="page-title">
        <h1 id="activity-heading">Activity</h1>
      </header>
      <form className="filters" aria-label="Filters" onSubmit={(event) => event.preventDefault()}>
        <label htmlFor={ids.businessObject}>Business object</label>
        <select
          id={ids.businessObject}
          value={businessObject}
          onChange={(event) => setBusinessObject(event.target.value)}
        >
          <option value="">All</option>
          {(businessObjects.data ?? []).map((definition) => (
            <option key={definition.name} value={definition.name}>
              {plural(businessObjectLabel(definition.name))}
            </option>
          ))}
        </select>
        <label htmlFor={ids.actor}>Actor</label>
        <select id={ids.actor} value={actor} onChange={(event) => setActor(event.target.value)}>
          <option value="">Anyone</option>
          {[...actors].map(([key, label]) => (
            <option key={key} value={key}>
              {label}
            </option>
          ))}
        </select>
        <label htmlFor={ids.from}>From</label>
        <input id={ids.from} type="datetime-local" value={from} onChange={(event) => setFrom(event.target.value)} />
        <label htmlFor={ids.to}>Before</label>
        <input id={ids.to} type="datetime-local" value={to} onChange={(event) => setTo(event.target.value)} />
      </form>
      {feed.isError ? (
        <p className="error" role="alert">
          {errorMessage(feed.error)}
        </p>
      ) : null}
      {feed.isPending ? <p className="muted">Loading…</p> : null}
      {!feed.isPending && entries.length === 0 && !readOn ? <p className="muted">No activity.</p> : null}
      <ol className="activity-list" aria-label="Changes, oldest first">
        {entries.map((entry) => (
          <ActivityRow key={entry.id} entry={entry} onActor={() => setActor(actorKey(entry.actor))} />
        ))}
      </ol>
      {last === undefined ? null : (
        <button type="button" className="secondary" onClick={() => void fetchNextPage()} disabled={isFetching}>
          {isFetching ? "Loading…" : last.more ? "Load more" : "Check for newer"}
        </button>
      )}
    </section>
  )
}
