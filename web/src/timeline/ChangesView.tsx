import { isErased } from "../../../src/api/Erased"
import type { Fields } from "../../../src/api/Field"
import { humanize, shortId } from "../labels"
import type { EntryIndex } from "./entryIndex"
import { entryKey } from "./entryIndex"
import { entryText, inFieldOrder, memberFields } from "./order"
import type { CollectionChangesView, Plain } from "./shape"
import { asCollectionChanges, asValueChange, isPlain } from "./shape"
import { MembersView, ValueView } from "./ValueView"
import { own } from "../../../src/api/own"

interface Props {
  /** The diff of one record or collection entry, field by field. */
  readonly changes: Plain
  /** The fields of that record or entry (current schema): order and names. */
  readonly fields: Fields | undefined
  /** Known collection entries, to name those the diff gives only by id. */
  readonly entries: EntryIndex
}

/** A field diff as a list, in field order: each changed field with its change. */
export const ChangesView = ({ changes, fields, entries }: Props) => (
  <dl className="changes">
    {inFieldOrder(changes, fields).map(([name, change]) => (
      <div key={name} className="change">
        <dt>{humanize(name)}</dt>
        <dd>
          <FieldChange
            name={name}
            change={change}
            fields={memberFields(fields === undefined ? undefined : own(fields, name))}
            entries={entries}
          />
        </dd>
      </div>
    ))}
  </dl>
)

/** A struct's value (an erased value's marker is a single value, though an object on the wire). */
const isStruct = (value: unknown): value is Plain => isPlain(value) && !isErased(value)

interface FieldChangeProps {
  readonly name: string
  readonly change: unknown
  readonly fields: Fields | undefined
  readonly entries: EntryIndex
}

const FieldChange = ({ name, change, fields, entries }: FieldChangeProps) => {
  const value = asValueChange(change)
  if (value !== undefined) {
    return isStruct(value.from) || isStruct(value.to) ? (
      <StructChange from={value.from} to={value.to} fields={fields} />
    ) : (
      <span className="value-change">
        <span className="from">
          <ValueView value={value.from} fields={fields} />
        </span>
        <span className="arrow" role="img" aria-label="changed to">
          {" → "}
        </span>
        <span className="to">
          <ValueView value={value.to} fields={fields} />
        </span>
      </span>
    )
  }
  const collection = asCollectionChanges(change)
  if (collection !== undefined)
    return <CollectionChange name={name} changes={collection} fields={fields} entries={entries} />
  return <code>{JSON.stringify(change)}</code>
}

/** A struct is one value: both sides in full, side by side, member by member; the changed members marked. */
const StructChange = ({
  from,
  to,
  fields
}: {
  readonly from: unknown
  readonly to: unknown
  readonly fields: Fields | undefined
}) => {
  const before: Plain = isStruct(from) ? from : {}
  const after: Plain = isStruct(to) ? to : {}
  const members = inFieldOrder({ ...before, ...after }, fields).map(([member]) => member)
  return (
    <table className="struct-change">
      <thead>
        <tr>
          <th scope="col">
            <span className="visually-hidden">Member</span>
          </th>
          <th scope="col">Before{isStruct(from) ? "" : isErased(from) ? ": erased" : ": none"}</th>
          <th scope="col">After{isStruct(to) ? "" : isErased(to) ? ": erased" : ": none"}</th>
        </tr>
      </thead>
      <tbody>
        {members.map((member) => {
          const changed = JSON.stringify(own(before, member) ?? null) !== JSON.stringify(own(after, member) ?? null)
          return (
            <tr key={member} className={changed ? "changed" : undefined}>
              <th scope="row">{humanize(member)}</th>
              <td className="from">
                <ValueView value={own(before, member)} />
              </td>
              <td className="to">
                <ValueView value={own(after, member)} />
              </td>
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

interface CollectionChangeProps {
  readonly name: string
  readonly changes: CollectionChangesView
  readonly fields: Fields | undefined
  readonly entries: EntryIndex
}

/** Entries added (with their values), modified (with their own diff) and removed, each named as a person knows it. */
const CollectionChange = ({ name, changes, fields, entries }: CollectionChangeProps) => {
  const entryName = (id: string) => entryText(entries.get(entryKey(name, id)), fields) ?? `entry ${shortId(id)}`
  return (
    <ul className="collection-change">
      {changes.added.map((entry) => (
        <li key={`added-${entry.id}`} className="added">
          <span className="tag">added</span> <MembersView members={entry.values} fields={fields} />
        </li>
      ))}
      {changes.modified.map((entry) => (
        <li key={`modified-${entry.id}`} className="modified">
          <span className="tag">modified</span>{" "}
          <span className="entry-name" title={entry.id}>
            {entryName(entry.id)}
          </span>{" "}
          <ChangesView changes={entry.changes} fields={fields} entries={entries} />
        </li>
      ))}
      {changes.removed.map((entry) => (
        <li key={`removed-${entry.id}`} className="removed">
          <span className="tag">removed</span>{" "}
          <span className="entry-name" title={entry.id}>
            {entryName(entry.id)}
          </span>
        </li>
      ))}
    </ul>
  )
}
