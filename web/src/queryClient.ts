import { QueryClient } from "@tanstack/react-query"
import { isUnauthorized } from "./errors"

/**
 * The tab's query cache. A 401 is not retried (it means "sign in"); other
 * failures are retried once. Broadcasts say when to refetch; refetching a
 * stale query when the tab regains focus covers what a reconnecting stream
 * missed.
 */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      retry: (failures, error) => !isUnauthorized(error) && failures < 1,
      staleTime: 5_000
    }
  }
})
