export { applyChanges } from "./apply"
export { diffValues } from "./diff"
