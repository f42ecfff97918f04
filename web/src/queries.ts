import type { QueryClient } from "@tanstack/react-query"
import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { useCallback } from "react"
import type { Credentials, ListOptions, Values } from "../../src/client"
import {
  backlinksQuery,
  businessObjectsQuery,
  correlationQuery,
  type FeedFilters,
  useLiveFeed as useBindingLiveFeed,
  invalidateBusinessObject,
  labelsQuery,
  recordAsOfQuery,
  recordPagesQuery,
  recordQuery,
  recordsQuery,
  timelinePagesQuery,
  timelineQuery,
  useBroadcastInvalidation,
  useRecordCommand as useBindingCommand,
  useEditors,
  usePresenceHeartbeat,
  useRevertRecord as useBindingRevert,
  useSaveRecord as useBindingSave
} from "../../src/client/react"
import { client } from "./client"
import { announceSession, useSessionAnnouncements } from "./session/sessionChannel"

/**
 * The page's reads and writes: the typed client through its TanStack Query
 * binding (its keys, its invalidation), bound to the page's one client.
 */

const meKey = ["me"] as const

/** Who the session cookie is, or null when signed out: asked of `/api/auth/session`, which answers 200 either way (no red 401 in the console). */
export const useMe = () => useQuery({ queryKey: meKey, queryFn: () => client.auth.session() })

/** Keys do not name the workspace: a session change drops every query, and `me` is asked again (the sign-in page when signed out). */
const sessionChanged = async (queryClient: QueryClient) => {
  queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== meKey[0] })
  await queryClient.resetQueries({ queryKey: meKey })
}

/** Signing in replaces whatever an earlier session left in the cache, here and in the page's other tabs. */
export const useSignIn = () => {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (credentials: Credentials) => client.auth.login(credentials),
    onSuccess: (me) => {
      queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== meKey[0] })
      queryClient.setQueryData(meKey, me)
      announceSession("signed-in")
    }
  })
}

/** Signing out shows the sign-in page here and in the page's other tabs. */
export const useSignOut = () => {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: () => client.auth.logout(),
    onSettled: async () => {
      announceSession("signed-out")
      await sessionChanged(queryClient)
    }
  })
}

/** Another tab signed in or out: this one follows (the session cookie is the origin's). */
export const useSessionOfOtherTabs = () => {
  const queryClient = useQueryClient()
  useSessionAnnouncements(useCallback(() => void sessionChanged(queryClient), [queryClient]))
}

/**
 * The broadcast stream of the signed-in workspace (one for all the page's
 * tabs), invalidating what it hints at; a 401 on it (the session ended:
 * signed out, expired, membership removed) shows the sign-in page. Every
 * tab of the workspace hears of that 401 from the stream's own relay, so it
 * is not announced again.
 */
export const useBroadcastStream = (workspace: string) => {
  const queryClient = useQueryClient()
  useBroadcastInvalidation(client, workspace, { onSignedOut: () => void sessionChanged(queryClient) })
}

export const useBusinessObjects = () => useQuery(businessObjectsQuery(client))

/** The plugins' labels (system actors, jobs, actions, listeners), read with the definitions. */
export const useLabels = () => useQuery(labelsQuery(client))

export const useDefinition = (businessObject: string) =>
  useQuery({
    ...businessObjectsQuery(client),
    select: (definitions) => {
      const definition = definitions.find((candidate) => candidate.name === businessObject)
      if (definition === undefined) throw new Error(`There is no business object ${businessObject} you may read.`)
      return definition
    }
  })

export const useRecords = (businessObject: string) => useQuery(recordsQuery(client, businessObject))

/** A list page by page, sorted, filtered and searched (`fetchNextPage`: "Load more"). */
export const useRecordPages = (businessObject: string, options: Omit<ListOptions, "cursor">, enabled = true) =>
  useInfiniteQuery({ ...recordPagesQuery(client, businessObject, options), placeholderData: keepPreviousData, enabled })

/** The records that link to this one, per business object and link field the viewer may read. */
export const useBacklinks = (businessObject: string, id: string) => useQuery(backlinksQuery(client, businessObject, id))

export const useRecord = (businessObject: string, id: string) => useQuery(recordQuery(client, businessObject, id))

/** The record as it was just after the timeline entry `entry`. */
export const useRecordAsOf = (businessObject: string, id: string, entry: string) =>
  useQuery({ ...recordAsOfQuery(client, businessObject, id, entry), retry: false })

/** Reverts to an entry, or undoes one, on the version shown. */
export const useRevertRecord = (businessObject: string) => useBindingRevert(client, businessObject)

/** The record a link names, when it is not among the live ones listed (it may be archived or gone: a 404). */
export const useLinkedRecord = (businessObject: string, id: string, enabled: boolean) =>
  useQuery({ ...recordQuery(client, businessObject, id), enabled, retry: false })

/** The newest page of a record's timeline (50 rows), hydrated: what a cascade's cause is looked up in. */
export const useTimeline = (businessObject: string, id: string, options: { readonly enabled?: boolean } = {}) =>
  useQuery({ ...timelineQuery(client, businessObject, id), enabled: options.enabled ?? true })

/** The whole timeline, a page (50 rows) at a time: `fetchNextPage` loads older rows while `hasNextPage`. */
export const useTimelinePages = (businessObject: string, id: string) =>
  useInfiniteQuery(timelinePagesQuery(client, businessObject, id))

/** The id of the record's newest timeline entry (from the timeline already loaded): nothing to revert to there. */
export const useNewestEntryId = (businessObject: string, id: string): string | undefined =>
  useInfiniteQuery({
    ...timelinePagesQuery(client, businessObject, id),
    select: (data) => data.pages[0]?.entries[0]?.id
  }).data

/**
 * Saves the given fields of record `id` on the version they were edited on
 * (`If-Match`); a record that moved on since rejects with a `VersionConflictError`.
 */
export const useSaveRecord = (businessObject: string, id: string) => {
  const save = useBindingSave(client, businessObject)
  return {
    ...save,
    mutate: (values: Values, ifMatch: number, options?: { readonly onSuccess?: () => void }) =>
      save.mutate({ id, values, ifMatch }, { onSuccess: () => options?.onSuccess?.() })
  }
}

export const useCreateRecord = (businessObject: string) => useBindingSave(client, businessObject)

/** Lifecycle steps, plugin actions and deletion, each with `If-Match`. */
export const useRecordCommand = (businessObject: string) => useBindingCommand(client, businessObject)

/** Drops what is cached about `businessObject` and fetches it again ("take theirs"). */
export const useRefetchBusinessObject = (businessObject: string) => {
  const queryClient = useQueryClient()
  return () => invalidateBusinessObject(queryClient, businessObject)
}

/** This form's presence on record `id`: heartbeats while `active`, leaves otherwise. */
export const useEditingPresence = (businessObject: string, id: string, editorId: string, active: boolean) =>
  usePresenceHeartbeat(client, { businessObject, id, editorId, active })

const noEditors: ReadonlyArray<never> = []

/** The live editors of record `id`, this page's own form among them (`presence/editorsSentence.ts` leaves it out). */
export const useEditorsOf = (businessObject: string, id: string) => {
  const editors = useEditors(client, businessObject)
  return editors.data?.[id] ?? noEditors
}

/** The workspace feed with `filters`, newest first, live: new rows on top as they commit, older pages on demand. */
export const useLiveFeed = (filters: FeedFilters) => useBindingLiveFeed(client, filters)

/** One unit of work and its cascade, grouped by unit and cause. */
export const useCorrelation = (correlationId: string) => useQuery(correlationQuery(client, correlationId))
