import { crc16, keySlot, slotCount } from "../redis/keySlot"

/** How many sharded channels carry the hints on a Redis Cluster; every instance subscribes to all of them. */
export const partitionCount = 16

/**
 * The hash tag of each partition, `p<N>`: for partition i the smallest N whose slot falls in the i-th
 * sixteenth of the slot space, so that the partitions spread over the masters as evenly as the slots do
 * (`redis-cli --cluster create` gives each master one contiguous range).
 */
const tags: ReadonlyArray<string> = Array.from({ length: partitionCount }, (_, partition) => {
  const from = Math.floor((partition * slotCount) / partitionCount)
  const to = Math.floor(((partition + 1) * slotCount) / partitionCount)
  for (let n = 0; ; n++) {
    const slot = keySlot(`p${n}`)
    if (slot >= from && slot < to) return `p${n}`
  }
})

/** The sharded channel of each partition, `<prefix>bc:{p<N>}`, in partition order. */
export const partitionChannels = (prefix: string): ReadonlyArray<string> => tags.map((tag) => `${prefix}bc:{${tag}}`)

/** The partition a workspace's hints go to: a hash of its id, so one workspace's hints keep their order. */
export const partitionOf = (workspace: string): number => crc16(workspace) % partitionCount
