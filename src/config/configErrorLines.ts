import { ConfigError } from "effect"

/** A check over several variables has no path of its own: its message names them. */
const line = (path: ReadonlyArray<string>, message: string) =>
  path.length === 0 ? message : `${path.join(".")}: ${message}`

/**
 * A configuration error as one line per wrong or missing variable, in the
 * order they were read: `PORT: Expected a network port value but received
 * "abc"`. `Config.all` gathers every failure into one error (`And`); each
 * becomes its own line, so an operator fixes them all in one go.
 */
export const configErrorLines = (error: ConfigError.ConfigError): ReadonlyArray<string> => [
  ...new Set(
    ConfigError.reduceWithContext(error, undefined, {
      andCase: (_, left: ReadonlyArray<string>, right: ReadonlyArray<string>) => [...left, ...right],
      orCase: (_, left: ReadonlyArray<string>, right: ReadonlyArray<string>) => [...left, ...right],
      invalidDataCase: (_, path, message) => [line(path, message)],
      missingDataCase: (_, path, message) => [line(path, message)],
      sourceUnavailableCase: (_, path, message) => [line(path, message)],
      unsupportedCase: (_, path, message) => [line(path, message)]
    })
  )
]
