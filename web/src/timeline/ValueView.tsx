import { Fragment } from "react"
import { isErased } from "../../../src/api/Erased"
import type { Fields } from "../../../src/api/Field"
import { PlainDate } from "../../../src/client/hydration/PlainDate"
import { formatDate } from "../format/dates"
import { humanize } from "../labels"
import { isLinkValue, LinkedTitle } from "../titles/LinkedTitle"
import { useTitles } from "../titles/TitlesContext"
import { describeTime } from "./describe"
import { inFieldOrder, memberFields } from "./order"
import type { Plain } from "./shape"
import { isList, isPlain } from "./shape"

interface Props {
  readonly value: unknown
  /** The members' fields, when the value is a struct or a collection. */
  readonly fields?: Fields | undefined
}

/**
 * A value as a person reads it: "none" for no value, "erased" for a value
 * erased from the history, yes/no, a struct as its members, a collection as
 * its entries; a decimal as written, a date and a datetime as the browser's
 * locale writes them (`format/dates.ts`); a link value (a record id) as the
 * linked record's title from the titles around it (`TitlesProvider`), never the id.
 */
export const ValueView = ({ value, fields }: Props) => {
  const titles = useTitles()
  if (value === null || value === undefined) return <span className="none">none</span>
  if (isErased(value)) return <ErasedValue />
  if (typeof value === "boolean") return <span className="value">{value ? "yes" : "no"}</span>
  if (isList(value)) {
    if (value.length === 0) return <span className="none">no entries</span>
    return (
      <ol className="entries">
        {value.map((entry, index) => (
          <li key={isPlain(entry) && typeof entry.id === "string" ? entry.id : index}>
            {isPlain(entry) ? <MembersView members={withoutId(entry)} fields={fields} /> : <ValueView value={entry} />}
          </li>
        ))}
      </ol>
    )
  }
  if (PlainDate.isPlainDate(value)) {
    return <time dateTime={value.toString()}>{formatDate(value)}</time>
  }
  if (value instanceof Date) {
    const time = describeTime(value)
    return <time dateTime={time.iso}>{time.text}</time>
  }
  if (isPlain(value)) return <MembersView members={value} fields={fields} />
  if (typeof value === "string" && isLinkValue(value, titles)) return <LinkedTitle id={value} />
  return <span className="value">{String(value)}</span>
}

/** Where an erased value stood: the value is gone, its commitment kept (docs/ledger.md, "Erasure"). */
export const ErasedValue = () => (
  <span className="erased" title="This value was erased: it is gone from the history, which still verifies">
    erased
  </span>
)

const withoutId = (entry: Plain): Plain => Object.fromEntries(Object.entries(entry).filter(([key]) => key !== "id"))

/** A struct or an entry, inline and in field order: `Street 1 Harbour Road  City Oslo`. */
export const MembersView = ({ members, fields }: { readonly members: Plain; readonly fields?: Fields | undefined }) => {
  const shown = inFieldOrder(members, fields).filter(([, member]) => member !== null && member !== undefined)
  if (shown.length === 0) return <span className="none">none</span>
  return (
    <span className="members">
      {shown.map(([name, member], index) => (
        <Fragment key={name}>
          {index > 0 ? " " : null}
          <span className="member">
            <span className="member-name">{humanize(name)}</span>{" "}
            <ValueView value={member} fields={memberFields(fields?.[name])} />
          </span>
        </Fragment>
      ))}
    </span>
  )
}
