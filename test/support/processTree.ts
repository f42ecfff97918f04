import { readdirSync, readFileSync } from "node:fs"

export interface ProcessArgs {
  readonly pid: number
  /** Its arguments as the kernel shows them to every user (`/proc/<pid>/cmdline`, what `ps` prints). */
  readonly argv: ReadonlyArray<string>
}

/** A file of /proc, or undefined once its process is gone. */
const readProc = (pid: string, file: string): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/${file}`, "utf8")
  } catch {
    return undefined
  }
}

/** The parent of every live process (Linux): the field after the command name, which may hold spaces and parentheses. */
const parents = (): ReadonlyArray<{ readonly pid: number; readonly ppid: number }> =>
  readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .flatMap((pid) => {
      const stat = readProc(pid, "stat")
      const ppid = stat === undefined ? undefined : Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      return ppid === undefined ? [] : [{ pid: Number(pid), ppid }]
    })

/** `root` and every process below it, each with its arguments (Linux). */
export const processTree = (root: number): ReadonlyArray<ProcessArgs> => {
  const all = parents()
  const tree = [root]
  for (let i = 0; i < tree.length; i++)
    for (const { pid, ppid } of all) if (ppid === tree[i] && !tree.includes(pid)) tree.push(pid)
  return tree.flatMap((pid) => {
    const cmdline = readProc(String(pid), "cmdline")
    return cmdline === undefined ? [] : [{ pid, argv: cmdline.split("\0").filter((arg) => arg !== "") }]
  })
}
