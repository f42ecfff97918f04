import { createHash } from "node:crypto"
import { join, resolve } from "node:path"

/**
 * Where the embedded server listens for the admin command line: a Unix
 * socket in the data directory; on Windows, which has no such files, a named
 * pipe whose name is derived from the data directory's absolute path, so each
 * data directory has its own.
 */
export const adminSocketPath = (dataDir: string, platform: NodeJS.Platform = process.platform): string =>
  platform === "win32"
    ? `\\\\.\\pipe\\audit-broadcast-admin-${createHash("sha256").update(resolve(dataDir)).digest("hex").slice(0, 16)}`
    : join(dataDir, "admin.sock")
