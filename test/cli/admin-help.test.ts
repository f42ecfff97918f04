import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Command } from "effect/cli"
import { readFileSync } from "node:fs"
import { basename, join } from "node:path"
import { adminCommand } from "../../src/app/admin/commands"
import packageJson from "../../package.json" with { type: "json" }
import { meaningfulLines, runProcess } from "../support/subprocess"

/**
 * The compiled admin command line's help and version (`dist/server/admin.js`,
 * built by the tests' global setup), as an operator gets them piped into
 * `less` or a file: no database, no server.
 */

// A database that is not there: --help and --version must not try it.
const noDatabase = { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", REDIS_URL: undefined }

const admin = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}) =>
  runProcess("node", ["dist/server/admin.js", ...args], {
    ...noDatabase,
    NO_COLOR: undefined,
    FORCE_COLOR: undefined,
    ...env
  })

/** Every command of the tree as typed after `admin` (`[]`, `["member"]`, `["member", "set-role"]`, ...). */
const pathsOf = (command: Command.Command.Any, path: ReadonlyArray<string> = []): Array<ReadonlyArray<string>> => [
  path,
  ...command.subcommands.flatMap((group) => group.commands).flatMap((child) => pathsOf(child, [...path, child.name]))
]

// biome-ignore lint/suspicious/noControlCharactersInRegex: an ANSI escape sequence is what is looked for
const ansi = /\x1b\[/

/** The files a compiled entry loads at start: itself and the chunks it imports statically, transitively. */
const staticClosure = (file: string, seen = new Set<string>()): Set<string> => {
  if (seen.has(file)) return seen
  seen.add(file)
  for (const match of readFileSync(file, "utf8").matchAll(/\bimport\s*(?:[^("]*?from\s*)?"(\.\/[^"]+)"/g))
    staticClosure(join(file, "..", match[1] ?? ""), seen)
  return seen
}

describe("admin command line help", () => {
  it.effect(
    "piped, every command's help is plain text within 100 columns; NO_COLOR wins over FORCE_COLOR",
    () =>
      Effect.gen(function* () {
        for (const path of pathsOf(adminCommand)) {
          const help = yield* admin([...path, "--help"])
          const shown = `admin ${path.join(" ")} --help`
          expect(help.code, `${shown}: ${help.stderr}`).toBe(0)
          expect(help.stdout, shown).toContain("USAGE")
          expect(help.stdout, shown).not.toMatch(ansi)
          for (const line of help.stdout.split("\n")) expect(line.length, `${shown}: ${line}`).toBeLessThanOrEqual(100)
        }
        // Colours are there to be found when forced, and NO_COLOR still turns them off.
        expect((yield* admin(["--help"], { FORCE_COLOR: "1" })).stdout).toMatch(ansi)
        expect((yield* admin(["--help"], { FORCE_COLOR: "1", NO_COLOR: "1" })).stdout).not.toMatch(ansi)
      }),
    120_000
  )

  it.effect("--help lists every command, --version prints the package's version, no command prints the help", () =>
    Effect.gen(function* () {
      const help = yield* admin(["--help"])
      expect(help.code, help.stderr).toBe(0)
      for (const command of ["workspace list", "user list", "member list", "apikey list", "agent list"])
        expect(help.stdout).toContain(command)
      expect(help.stdout).toContain("user create --email text --name text\n")
      const version = yield* admin(["--version"])
      expect(version.code, version.stderr).toBe(0)
      expect(meaningfulLines(version.stdout)).toEqual([packageJson.version])
      const bare = yield* admin([])
      expect(bare.code, bare.stderr).toBe(0)
      expect(bare.stdout).toContain("workspace create")
    })
  )

  it("--help and --version load neither the commands' code nor the services nor a database driver", () => {
    const atStart = [...staticClosure(join(process.cwd(), "dist/server/admin.js"))]
    expect(atStart.length).toBeGreaterThan(1)
    for (const file of atStart) {
      expect(basename(file)).not.toMatch(/^(handlers|whereToRun)-/)
      expect(readFileSync(file, "utf8"), file).not.toMatch(/from\s*"@electric-sql\/pglite/)
    }
  })
})
