import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import type { Credentials, Values } from "../../src/client"
import {
  businessObjectsQuery,
  recordQuery,
  recordsQuery,
  timelineQuery,
  useBroadcastInvalidation,
  useEditors,
  usePresenceHeartbeat,
  useSaveRecord as useBindingSave
} from "../../src/client/react"
import { client } from "./client"

/**
 * The page's reads and writes: the typed client through its TanStack Query
 * binding (its keys, its invalidation), bound to the page's one client.
 */

const meKey = ["me"] as const

export const useMe = () => useQuery({ queryKey: meKey, queryFn: () => client.auth.me() })

/** Signing in replaces whatever an earlier session left in the cache. */
export const useSignIn = () => {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (credentials: Credentials) => client.auth.login(credentials),
    onSuccess: (me) => {
      queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== meKey[0] })
      queryClient.setQueryData(meKey, me)
    }
  })
}

/** Keys do not name the workspace: signing out drops every query, and `me` answers 401 again. */
export const useSignOut = () => {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: () => client.auth.logout(),
    onSettled: async () => {
      queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== meKey[0] })
      await queryClient.resetQueries({ queryKey: meKey })
    }
  })
}

/** The tab's one broadcast stream of the signed-in workspace, invalidating what it hints at. */
export const useBroadcastStream = (workspace: string) => useBroadcastInvalidation(client, workspace)

export const useBusinessObjects = () => useQuery(businessObjectsQuery(client))

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

export const useRecord = (businessObject: string, id: string) => useQuery(recordQuery(client, businessObject, id))

/** The newest page of the timeline (the client's default: 50 rows), hydrated. */
export const useTimeline = (businessObject: string, id: string) => useQuery(timelineQuery(client, businessObject, id))

/** Saves the given fields of record `id`; settles once the refetch it causes has landed. */
export const useSaveRecord = (businessObject: string, id: string) => {
  const save = useBindingSave(client, businessObject)
  return {
    ...save,
    mutate: (values: Values, options?: { readonly onSuccess?: () => void }) =>
      save.mutate({ id, values }, { onSuccess: () => options?.onSuccess?.() })
  }
}

export const useCreateRecord = (businessObject: string) => useBindingSave(client, businessObject)

/** This form's presence on record `id`: heartbeats while `active`, leaves otherwise. */
export const useEditingPresence = (businessObject: string, id: string, editorId: string, active: boolean) =>
  usePresenceHeartbeat(client, { businessObject, id, editorId, active })

/** The live editors of record `id` other than this page's own form. */
export const useOtherEditors = (businessObject: string, id: string, ownEditorId: string) => {
  const editors = useEditors(client, businessObject)
  return (editors.data?.[id] ?? []).filter((editor) => editor.id !== ownEditorId)
}
