import type { ReactNode } from "react"
import { createContext, useContext } from "react"
import type { Actor } from "../../../src/api/Actor"
import type { PluginLabels } from "../../../src/api/RecordTitle"
import type { Naming } from "../timeline/describe"
import { useTitles } from "./TitlesContext"

const Labels = createContext<PluginLabels | undefined>(undefined)

/** The plugins' labels for everything rendered inside (the signed-in page provides them once, from the definitions). */
export const LabelsProvider = ({
  labels,
  children
}: {
  readonly labels: PluginLabels | undefined
  readonly children: ReactNode
}) => <Labels.Provider value={labels}>{children}</Labels.Provider>

/** The plugins' labels and the titles known here; `actor`: who wrote the row being described. */
export const useNaming = (actor?: Actor): Naming => ({ labels: useContext(Labels), titles: useTitles(), actor })
