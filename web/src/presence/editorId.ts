import { randomId } from "../../../src/client"

/** An editor id for one open form. */
export const newEditorId = (): string => randomId(16)
