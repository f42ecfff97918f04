import type { Fields } from "../../../src/api/Field"
import { humanize } from "../labels"
import { inFieldOrder, memberFields } from "./order"
import type { Plain } from "./shape"
import { ValueView } from "./ValueView"
import { own } from "../../../src/api/own"

/** A created or deleted row's snapshot: every field that has a value, in field order. */
export const SnapshotView = ({ record, fields }: { readonly record: Plain; readonly fields: Fields }) => {
  const shown = inFieldOrder(record, fields).filter(([, value]) => value !== null && value !== undefined)
  if (shown.length === 0) return <p className="none">no values</p>
  return (
    <dl className="snapshot">
      {shown.map(([name, value]) => (
        <div key={name} className="change">
          <dt>{humanize(name)}</dt>
          <dd>
            <ValueView value={value} fields={memberFields(own(fields, name))} />
          </dd>
        </div>
      ))}
    </dl>
  )
}
