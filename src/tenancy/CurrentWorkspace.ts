import { Context } from "effect"
import type { Workspace } from "../api/Workspace"

/** The workspace a unit of work writes to. */
export class CurrentWorkspace extends Context.Tag("CurrentWorkspace")<CurrentWorkspace, Workspace>() {}
