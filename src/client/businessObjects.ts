import { ApiError } from "./errors"
import type { Transport } from "./transport"
import type { ListedBusinessObject, PluginLabels } from "./wire"

/**
 * The business object definitions of the signed-in caller, fetched once
 * and revalidated by their `ETag`: every hydration (timelines, a 412's
 * entries) reads the kept list, and only asks the service again when it
 * has none or lacks the business object at hand.
 */
export interface Definitions {
  /** `GET /api/business-objects` with `If-None-Match` of the kept list: a 304 keeps it, a 200 replaces it. */
  readonly revalidate: () => Promise<ReadonlyArray<ListedBusinessObject>>
  /** The kept list; revalidated first when there is none yet or it does not name `businessObject`. */
  readonly current: (businessObject?: string) => Promise<ReadonlyArray<ListedBusinessObject>>
  /** The plugins' labels the kept list came with (empty from a service older than them); fetched first when none is kept. */
  readonly labels: () => Promise<PluginLabels>
}

const noLabels: PluginLabels = { actors: {}, jobs: {}, actions: {}, listeners: {} }

interface Kept {
  readonly etag: string | undefined
  readonly list: ReadonlyArray<ListedBusinessObject>
  readonly labels: PluginLabels
}

export const makeDefinitions = (transport: Transport): Definitions => {
  let kept: Kept | undefined
  // One request at a time: a page that mounts a list and three timelines at once asks once.
  let inFlight: Promise<ReadonlyArray<ListedBusinessObject>> | undefined

  const fetchList = async (): Promise<ReadonlyArray<ListedBusinessObject>> => {
    const known = kept
    let etag: string | undefined
    try {
      const answer = await transport.call(
        (api) =>
          api.businessObjects.list({ headers: known?.etag === undefined ? {} : { "if-none-match": known.etag } }),
        { onResponse: (response) => (etag = response.headers.get("etag") ?? undefined) }
      )
      kept = { etag, list: answer.businessObjects, labels: answer.labels ?? noLabels }
      return answer.businessObjects
    } catch (error) {
      if (error instanceof ApiError && error.status === 304 && known !== undefined) return known.list
      throw error
    }
  }

  const revalidate = () => {
    inFlight ??= fetchList().finally(() => {
      inFlight = undefined
    })
    return inFlight
  }

  return {
    revalidate,
    labels: async () => {
      if (kept === undefined) await revalidate()
      return kept?.labels ?? noLabels
    },
    current: async (businessObject) => {
      const list = kept?.list
      if (list !== undefined && (businessObject === undefined || list.some((one) => one.name === businessObject))) {
        return list
      }
      return revalidate()
    }
  }
}
