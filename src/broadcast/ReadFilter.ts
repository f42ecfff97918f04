/** Whether a stream may see hints about a business object. */
export type ReadFilter = (businessObject: string) => boolean

export const acceptAll: ReadFilter = () => true
