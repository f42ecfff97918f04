import { Console, Effect } from "effect"
import type { Actor } from "../../api/Actor"
import { BadRequest } from "../../api/errors"
import { withActor } from "../../context/Frames"
import { Erasure } from "../../ledger/Erasure"
import { quote } from "../../messages/inputExcerpt"
import { Workspaces } from "../../tenancy/Workspaces"
import { UnitOfWork } from "../../unitOfWork/UnitOfWork"

/** Who an erasure from the command line names on the record's timeline: the operator, as a system actor. */
export const operatorActor: Actor = { kind: "system", name: "operator" }

/** `<namespace>/<name>/<id>`: the business object and the record's id. */
const recordOf = (text: string) => {
  const [namespace, name, id, ...rest] = text.split("/")
  return namespace && name && id && rest.length === 0
    ? Effect.succeed({ businessObject: `${namespace}/${name}`, id })
    : Effect.fail(new BadRequest({ message: `--record ${quote(text)}: expected <namespace>/<name>/<id>` }))
}

/**
 * `admin audit erase`: erases values of one record from every snapshot and
 * diff of its timeline, keeping their commitments so the ledger still
 * verifies (docs/ledger.md, "Erasure"); the same unit of work as
 * `POST /api/records/:namespace/:name/:id/erase`, as the operator.
 */
export const auditErase = ({
  fields,
  record,
  workspace
}: {
  readonly workspace: string
  readonly record: string
  readonly fields: ReadonlyArray<string>
}) =>
  Effect.gen(function* () {
    const { businessObject, id } = yield* recordOf(record)
    const target = yield* (yield* Workspaces).get(workspace)
    const erasure = yield* Erasure
    const erased = yield* (yield* UnitOfWork)
      .run(target, erasure.erase({ businessObject, id, fields }))
      .pipe(withActor(operatorActor))
    const what = erased.fields.length === 0 ? "every value" : erased.fields.join(", ")
    yield* Console.log(
      `erased ${what} of ${businessObject} ${id}: ${erased.values} value${erased.values === 1 ? "" : "s"} in ` +
        `${erased.rows} audit row${erased.rows === 1 ? "" : "s"}, their commitments kept (entry ${erased.entry}; ` +
        `${erased.version === null ? "the record is deleted" : `the record is at version ${erased.version}`})`
    )
  })
