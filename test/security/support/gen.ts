import { Arbitrary, Effect, Predicate, Schema } from "effect"

/**
 * The few generators the hostile-input suite builds its requests from, on
 * effect's `Arbitrary` (seeded, shrinking, replayable): a choice among
 * values, a weighted choice among generators, bounded integers and texts.
 */

export type Arb<A> = Arbitrary.Arbitrary<A>

export const integer = (minimum: number, maximum: number): Arb<number> =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

export const constant = <A>(value: A): Arb<A> => Arbitrary.Constant(value)

/** One of the values, each as likely. */
export const pick = <const A>(first: A, ...rest: ReadonlyArray<A>): Arb<A> =>
  Arbitrary.map(integer(0, rest.length), (index) => (index === 0 ? first : (rest[index - 1] ?? first)))

export interface Weighted<A> {
  readonly weight: number
  readonly arbitrary: Arb<A>
}

/** One of the generators, as likely as its weight says (a weight of 0 is never drawn). */
export const weighted = <A>(first: Weighted<A>, ...rest: ReadonlyArray<Weighted<A>>): Arb<A> => {
  const choices = [first, ...rest].filter((choice) => choice.weight > 0)
  const total = choices.reduce((sum, choice) => sum + choice.weight, 0)
  return Arbitrary.flatMap(integer(0, total - 1), (drawn) => {
    let left = drawn
    for (const choice of choices) {
      if (left < choice.weight) return choice.arbitrary
      left -= choice.weight
    }
    return first.arbitrary
  })
}

/** One of the generators, each as likely. */
export const oneOf = <A>(first: Arb<A>, ...rest: ReadonlyArray<Arb<A>>): Arb<A> =>
  weighted({ weight: 1, arbitrary: first }, ...rest.map((arbitrary) => ({ weight: 1, arbitrary })))

/** Any text of at most `maxLength` UTF-16 units (lone surrogates included). */
export const text = (maxLength: number): Arb<string> =>
  Arbitrary.schema(Schema.String.check(Schema.isMaxLength(maxLength)))

export const boolean: Arb<boolean> = Arbitrary.schema(Schema.Boolean)

/** Any JSON value. */
export const jsonValue: Arb<Schema.Json> = Arbitrary.schema(Schema.Json)

/** `undefined` once in `freq` draws, else a value of `arbitrary`. */
export const option = <A>(arbitrary: Arb<A>, freq: number): Arb<A | undefined> =>
  weighted<A | undefined>({ weight: 1, arbitrary: constant(undefined) }, { weight: freq - 1, arbitrary })

export const arrayOf = <A>(item: Arb<A>, maxLength: number): Arb<Array<A>> => Arbitrary.array(item, { maxLength })

/**
 * Checks `property` on `runs` generated values (from `seed`, or replaying a
 * failure's token) and fails with what broke, the replay token and the
 * shrunk input's description; gives up quietly after `timeLimitMs`, as
 * fast-check's `interruptAfterTimeLimit` did.
 */
export const checkAll = async <A>(
  arbitrary: Arb<A>,
  property: (value: A) => Promise<void>,
  options: {
    readonly runs: number
    readonly timeLimitMs: number
    readonly seed?: number | undefined
    readonly replay?: string | undefined
    readonly describe: (value: A) => string
  }
): Promise<void> => {
  const result = await Effect.runPromise(
    Arbitrary.checkEffect(
      arbitrary,
      (value) =>
        Effect.as(
          Effect.tryPromise(() => property(value)),
          true
        ),
      {
        runs: options.runs,
        ...(options.seed === undefined ? {} : { seed: options.seed }),
        ...(options.replay === undefined ? {} : { replay: options.replay })
      }
    ).pipe(Effect.timeoutOption(options.timeLimitMs))
  )
  if (result._tag === "None" || result.value._tag !== "Falsified") return
  const falsified = result.value
  // `Effect.tryPromise` fails with the rejection under `cause`.
  const rejection =
    falsified.failure._tag === "PropertyError" && Predicate.hasProperty(falsified.failure.error, "cause")
      ? falsified.failure.error.cause
      : falsified.failure
  const what = rejection instanceof Error ? rejection.message : String(rejection)
  throw new Error(
    `${what}\nreplay with FUZZ_REPLAY=${JSON.stringify(falsified.replay)}\nshrunk input:\n${options.describe(falsified.shrunkInput)}`
  )
}
