import { useDefinition, useLinkedRecord, useRecords } from "../queries"
import { Link, recordPath } from "../router"
import { recordTitle } from "./recordTitle"
import { own } from "../../../src/api/own"
import { useTitles } from "../titles/TitlesContext"

/**
 * A link value as the title of the record it names, linking to it: the
 * title the answer carried beside the value (`TitlesProvider`), marked when
 * the target was deleted; from a service older than titles, looked up.
 */
export const LinkTitle = ({ target, id }: { readonly target: string; readonly id: string }) => {
  const known = own(useTitles(), id)
  if (known === undefined) return <LookedUpTitle target={target} id={id} />
  return (
    <Link to={recordPath(target, id)} className={known.deleted ? "link-title deleted" : "link-title"}>
      {known.title}
      {known.deleted ? <span className="deleted-mark"> (deleted)</span> : null}
    </Link>
  )
}

/** The target found among its business object's newest records (one query per target, shared with the link pickers), else read on its own. */
const LookedUpTitle = ({ target, id }: { readonly target: string; readonly id: string }) => {
  const definition = useDefinition(target)
  const listed = useRecords(target)
  const found = listed.data?.find((record) => record.id === id)
  const single = useLinkedRecord(target, id, listed.isSuccess && found === undefined)
  const record = found ?? single.data
  const fields = definition.data?.fields ?? {}
  if (record === undefined) {
    if (listed.isPending || single.isPending) return <span className="muted">…</span>
    return <span className="none">unknown</span>
  }
  return <Link to={recordPath(target, id)}>{recordTitle(fields, record)}</Link>
}
