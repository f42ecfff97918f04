import type { ReactNode } from "react"
import { createContext, useContext, useMemo } from "react"
import type { RecordTitles } from "../../../src/api/RecordTitle"

const Titles = createContext<RecordTitles>({})

/**
 * The titles an answer carried (a record's `titles`, an audit row's, an
 * as-of answer's) for what is rendered inside: link values show them
 * instead of ids. Nested providers add to the outer ones; the inner wins.
 */
export const TitlesProvider = ({
  titles,
  children
}: {
  readonly titles: RecordTitles | undefined
  readonly children: ReactNode
}) => {
  const outer = useContext(Titles)
  const merged = useMemo(() => (titles === undefined ? outer : { ...outer, ...titles }), [outer, titles])
  return <Titles.Provider value={merged}>{children}</Titles.Provider>
}

/** The titles known where this renders. */
export const useTitles = (): RecordTitles => useContext(Titles)
