import type { ReactNode } from "react"
import type { Client } from "../index"
import { useBroadcastInvalidation } from "./useBroadcastInvalidation"

export interface LiveUpdatesProps {
  readonly client: Client
  /** The signed-in workspace; undefined: no stream. */
  readonly workspace: string | undefined
  /** The stream met a 401 (the session is gone): show the sign-in page. */
  readonly onSignedOut?: () => void
  readonly children?: ReactNode
}

/**
 * `useBroadcastInvalidation` as a component: put it inside the
 * `QueryClientProvider`, around what shows live data.
 *
 * ```tsx
 * <QueryClientProvider client={queryClient}>
 *   <LiveUpdates client={client} workspace={me.workspace.slug} onSignedOut={showSignIn}>
 *     <App />
 *   </LiveUpdates>
 * </QueryClientProvider>
 * ```
 */
export const LiveUpdates = ({ client, workspace, onSignedOut, children }: LiveUpdatesProps) => {
  useBroadcastInvalidation(client, workspace, { onSignedOut })
  return <>{children}</>
}
