import { errorMessage, isUnauthorized } from "./errors"
import { useMe, useSessionOfOtherTabs } from "./queries"
import { SignIn } from "./session/SignIn"
import { Workspace } from "./Workspace"

/** Signed in (the session cookie answers `/api/auth/me`): the workspace; otherwise the sign-in form. It follows the other tabs' sign-in and sign-out. */
export const App = () => {
  useSessionOfOtherTabs()
  const me = useMe()
  if (me.isPending) return <p className="muted">Loading…</p>
  if (me.isError) {
    return isUnauthorized(me.error) ? (
      <SignIn />
    ) : (
      <p className="error" role="alert">
        {errorMessage(me.error)}
      </p>
    )
  }
  return <Workspace key={me.data.workspace.slug} me={me.data} />
}
