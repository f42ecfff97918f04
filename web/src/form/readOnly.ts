import { createContext, useContext } from "react"

/**
 * Whether the form around shows a record that may not be changed here (the
 * viewer may only read it, or it is archived): its inputs are disabled and
 * the controls that add or remove entries are left out.
 */
export const ReadOnlyForm = createContext(false)

export const useReadOnly = () => useContext(ReadOnlyForm)
