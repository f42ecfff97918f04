import { Arbitrary, Effect, Predicate, Schema } from "effect"

/**
 * The generators the property tests build their inputs from, on effect's own
 * `Arbitrary` (seeded and shrinking). A failing `it.prop` prints its shrunk
 * input and a replay token (`Replay: [0,"<seed>",...]`); pass the token back
 * as `{ arbitrary: { replay: '<token>' } }` (its 4th argument) to run that very
 * case again. The fuzz suite's `checkAll` prints one too (`FUZZ_REPLAY`).
 */

export type Arb<A> = Arbitrary.Arbitrary<A>

export const integer = (minimum: number, maximum: number): Arb<number> =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

export const boolean: Arb<boolean> = Arbitrary.schema(Schema.Boolean)

/** One of the values, each as likely (shrinks towards the first). */
export const constantFrom = <const A>(...values: readonly [A, ...Array<A>]): Arb<A> =>
  Arbitrary.map(integer(0, values.length - 1), (index) => values[index] ?? values[0])

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

/** `nil` once in `freq` draws, else a value of `arbitrary`. */
export const option = <A, N>(arbitrary: Arb<A>, options: { readonly nil: N; readonly freq: number }): Arb<A | N> =>
  weighted<A | N>({ weight: 1, arbitrary: Arbitrary.Constant(options.nil) }, { weight: options.freq - 1, arbitrary })

/** Any text of at most `maxLength` UTF-16 units (lone surrogates included). */
export const text = (maxLength: number): Arb<string> =>
  Arbitrary.schema(Schema.String.check(Schema.isMaxLength(maxLength)))

/** Any JSON value. */
export const jsonValue: Arb<Schema.Json> = Arbitrary.schema(Schema.Json)

/** Some of `arbitraries` (each kept or left out), in their order. */
export const someOf = <A>(arbitraries: ReadonlyArray<Arb<A>>): Arb<Array<A>> =>
  Arbitrary.map(
    Arbitrary.all(arbitraries.map((arbitrary) => Arbitrary.all({ kept: boolean, value: arbitrary }))),
    (members) => members.flatMap(({ kept, value }) => (kept ? [value] : []))
  )

/** Each of `keys` left out of the generated value half of the time. */
export const someKeys = <A extends object>(full: Arb<A>, keys: ReadonlyArray<keyof A>): Arb<Partial<A>> =>
  Arbitrary.map(
    Arbitrary.all([full, Arbitrary.array(boolean, { minLength: keys.length, maxLength: keys.length })]),
    ([value, dropped]) => {
      const kept: Partial<A> = { ...value }
      keys.forEach((key, index) => {
        if (dropped[index] === true) delete kept[key]
      })
      return kept
    }
  )

/** Arrays whose elements have distinct `key`s: a later element with a key already taken is left out. */
export const uniqueArray = <A>(
  item: Arb<A>,
  key: (item: A) => unknown,
  options: { readonly minLength?: number; readonly maxLength: number }
): Arb<Array<A>> =>
  Arbitrary.map(Arbitrary.array(item, options), (items) =>
    items.filter((one, index) => items.findIndex((other) => key(other) === key(one)) === index)
  )

/**
 * Checks an asynchronous `property` on `runs` generated values (from `seed`,
 * or replaying a failure's token) and fails with what broke, the replay
 * token and the shrunk input's description; gives up quietly after
 * `timeLimitMs` (the fuzz suite's budget per route).
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
  if (result._tag === "None" || result.value._tag === "Passed") return
  const falsified = result.value
  // Too many discarded cases, or a replay that no longer fails: said as effect words it, with the seed.
  if (falsified._tag !== "Falsified") throw new Error(Arbitrary.formatCheckFailure(falsified))
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
