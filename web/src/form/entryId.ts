import { randomId } from "../../../src/client"

/** A fresh id for a new collection entry (the client chooses entry ids; the diff tells entries apart by them). */
export const newEntryId = (): string => randomId(12)
