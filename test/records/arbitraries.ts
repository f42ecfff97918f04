import { Arbitrary, Schema } from "effect"

/** Small generators over effect's `Arbitrary`, in the shapes the record and diff properties use. */

export const integer = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

export const boolean = Arbitrary.schema(Schema.Boolean)

export const constantFrom = <const A extends ReadonlyArray<string | number>>(...values: A) =>
  Arbitrary.schema(Schema.Literals(values))

/** One of the arbitraries, each chosen in proportion to its weight. */
export const weighted = <A>(
  first: readonly [number, Arbitrary.Arbitrary<A>],
  ...rest: ReadonlyArray<readonly [number, Arbitrary.Arbitrary<A>]>
): Arbitrary.Arbitrary<A> => {
  const options = [first, ...rest]
  const total = options.reduce((sum, [weight]) => sum + weight, 0)
  return Arbitrary.flatMap(integer(0, total - 1), (n) => {
    let left = n
    for (const [weight, arbitrary] of options) {
      if (left < weight) return arbitrary
      left -= weight
    }
    return first[1]
  })
}

export const oneOf = <A>(first: Arbitrary.Arbitrary<A>, ...rest: ReadonlyArray<Arbitrary.Arbitrary<A>>) =>
  weighted([1, first], ...rest.map((arbitrary) => [1, arbitrary] as const))

/** `nil` once in `freq` values, else a value of `arbitrary` (fast-check's `option`). */
export const option = <A, N>(arbitrary: Arbitrary.Arbitrary<A>, options: { readonly nil: N; readonly freq: number }) =>
  weighted<A | N>([1, Arbitrary.Constant(options.nil)], [options.freq - 1, arbitrary])

/** Each of `keys` left out of the generated value half of the time. */
export const someKeys = <A extends object>(
  full: Arbitrary.Arbitrary<A>,
  keys: ReadonlyArray<keyof A>
): Arbitrary.Arbitrary<Partial<A>> =>
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
  item: Arbitrary.Arbitrary<A>,
  key: (item: A) => unknown,
  options: { readonly minLength?: number; readonly maxLength: number }
) =>
  Arbitrary.map(Arbitrary.array(item, options), (items) =>
    items.filter((one, index) => items.findIndex((other) => key(other) === key(one)) === index)
  )
