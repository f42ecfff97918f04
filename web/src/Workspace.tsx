import { useEffect } from "react"
import { errorMessage } from "./errors"
import { plural } from "./labels"
import { useBroadcastStream, useBusinessObjects, useLabels, useSignOut } from "./queries"
import { LabelsProvider } from "./titles/naming"
import { typeLabelOf } from "./titles/typeLabel"
import { NewRecordPage } from "./records/NewRecordPage"
import { RecordList } from "./records/RecordList"
import { RecordPage } from "./records/RecordPage"
import { ActivityPage } from "./activity/ActivityPage"
import { CorrelationPage } from "./activity/CorrelationPage"
import type { Route } from "./router"
import { activityPath, Link, listPath, navigate, parseRoute, usePathname } from "./router"

interface Props {
  readonly me: { readonly name: string; readonly workspace: { readonly slug: string; readonly name: string } }
}

/** The signed-in page: the business objects to pick from, and the list or record the address names. */
export const Workspace = ({ me }: Props) => {
  useBroadcastStream(me.workspace.slug)
  const route = parseRoute(usePathname())
  const businessObjects = useBusinessObjects()
  const signOut = useSignOut()
  const labels = useLabels()
  const first = businessObjects.data?.[0]?.name
  useEffect(() => {
    if (route.page === "home" && first !== undefined) navigate(listPath(first), { replace: true })
  }, [route.page, first])
  const selected =
    route.page === "list" || route.page === "new" || route.page === "record" ? route.businessObject : undefined
  return (
    <LabelsProvider labels={labels.data}>
      <header className="topbar">
        <span className="brand">Records</span>
        <span>{me.workspace.name}</span>
        <span className="who">Signed in as {me.name}</span>
        <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
          Sign out
        </button>
      </header>
      <div className="layout">
        <nav className="sidebar panel" aria-label="Business objects">
          <h2>Business objects</h2>
          {businessObjects.isError ? <p className="error">{errorMessage(businessObjects.error)}</p> : null}
          <ul>
            {(businessObjects.data ?? []).map((definition) => (
              <li key={definition.name}>
                <Link to={listPath(definition.name)} aria-current={definition.name === selected ? "page" : undefined}>
                  {plural(typeLabelOf(definition.name, definition))}
                </Link>
              </li>
            ))}
          </ul>
          <h2>Workspace</h2>
          <ul>
            <li>
              <Link to={activityPath} aria-current={route.page === "activity" ? "page" : undefined}>
                Activity
              </Link>
            </li>
          </ul>
        </nav>
        <main>
          <RouteContent route={route} />
        </main>
      </div>
    </LabelsProvider>
  )
}

const RouteContent = ({ route }: { readonly route: Route }) => {
  switch (route.page) {
    case "home":
      return <p className="muted">Pick a business object.</p>
    case "list":
      return <RecordList key={route.businessObject} businessObject={route.businessObject} />
    case "new":
      return <NewRecordPage key={route.businessObject} businessObject={route.businessObject} />
    case "record":
      return (
        <RecordPage key={`${route.businessObject}/${route.id}`} businessObject={route.businessObject} id={route.id} />
      )
    case "activity":
      return <ActivityPage />
    case "correlation":
      return <CorrelationPage key={route.correlationId} correlationId={route.correlationId} />
  }
}
