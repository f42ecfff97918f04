// The entry of a reader thread: worker threads do not take the parent's `--import tsx`, so the TypeScript
// loader is registered here before reader.ts is loaded.
import { register } from "tsx/esm/api"

register()
await import("./reader.ts")
