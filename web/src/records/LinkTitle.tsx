import { useDefinition, useLinkedRecord, useRecords } from "../queries"
import { Link, recordPath } from "../router"
import { recordTitle } from "./recordTitle"

/**
 * A link value as the title of the record it names, linking to it: found
 * among the target's newest records (one query per target, shared with the
 * link pickers), else read on its own.
 *
 * TODO(titles): the API is getting a title beside each link value (issue 25,
 * item 1); once it is there, show that title and drop both lookups.
 */
export const LinkTitle = ({ target, id }: { readonly target: string; readonly id: string }) => {
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
