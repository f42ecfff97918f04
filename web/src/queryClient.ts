import { QueryClient } from "@tanstack/react-query"
import { isUnauthorized } from "./errors"

/**
 * The tab's query cache. A 401 is not retried (it means "sign in"); other
 * failures are retried once. Broadcasts say when to refetch, and the
 * stream's `resync` re-reads everything after what it may have missed.
 */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      retry: (failures, error) => !isUnauthorized(error) && failures < 1,
      staleTime: 5_000
    }
  }
})
