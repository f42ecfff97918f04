import { errorMessage, isUnauthorized } from "./errors"
import { useMe, useSessionOfOtherTabs } from "./queries"
import { SignIn } from "./session/SignIn"
import { Workspace } from "./Workspace"

/** Signed in (`/api/auth/session` names who): the workspace; otherwise the sign-in form. It follows the other tabs' sign-in and sign-out. */
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
  if (me.data === null) return <SignIn />
  return <Workspace key={me.data.workspace.slug} me={me.data} />
}
