import type { FormEvent } from "react"
import { useId, useState } from "react"
import { errorMessage } from "../errors"
import { useSignIn } from "../queries"

const lastWorkspaceKey = "records.lastWorkspace"

/** Workspace, email and password; the session cookie the service sets does the rest. */
export const SignIn = () => {
  const ids = { workspace: useId(), email: useId(), password: useId() }
  const [workspace, setWorkspace] = useState(() => window.localStorage.getItem(lastWorkspaceKey) ?? "")
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const signIn = useSignIn()
  const submit = (event: FormEvent) => {
    event.preventDefault()
    window.localStorage.setItem(lastWorkspaceKey, workspace)
    signIn.mutate({ workspace: workspace.trim(), email: email.trim(), password })
  }
  return (
    <main className="sign-in panel">
      <h1>Sign in</h1>
      <form onSubmit={submit} aria-label="Sign in">
        <div className="field">
          <label htmlFor={ids.workspace}>Workspace</label>
          <input
            id={ids.workspace}
            type="text"
            autoComplete="organization"
            required
            value={workspace}
            onChange={(event) => setWorkspace(event.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor={ids.email}>Email</label>
          <input
            id={ids.email}
            type="email"
            autoComplete="username"
            required
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor={ids.password}>Password</label>
          <input
            id={ids.password}
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </div>
        {signIn.isError ? (
          <p className="error" role="alert">
            {errorMessage(signIn.error)}
          </p>
        ) : null}
        <button type="submit" disabled={signIn.isPending}>
          {signIn.isPending ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  )
}
