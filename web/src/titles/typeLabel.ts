import { businessObjectLabel } from "../labels"

/** A business object type as a person names one ("Deal"): its declared label, else made from its name. */
export const typeLabelOf = (businessObject: string, definition?: { readonly label?: string | undefined }): string =>
  definition?.label ?? businessObjectLabel(businessObject)
