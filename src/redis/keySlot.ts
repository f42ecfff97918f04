/** CRC16/XMODEM, the checksum Redis Cluster hashes keys with. */
const table = Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  return crc
})

const crc16Bytes = (bytes: Uint8Array) => {
  let crc = 0
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ (table[((crc >> 8) ^ byte) & 0xff] ?? 0)
  return crc
}

const encoder = new TextEncoder()

/** CRC16/XMODEM of a string's UTF-8 bytes. */
export const crc16 = (text: string): number => crc16Bytes(encoder.encode(text))

export const slotCount = 16_384

/**
 * The cluster slot of a key or sharded channel, as `CLUSTER KEYSLOT` computes it: only the part between
 * the first `{` and the next `}` is hashed when that part is not empty (a hash tag).
 */
export const keySlot = (key: string): number => {
  const open = key.indexOf("{")
  const close = open === -1 ? -1 : key.indexOf("}", open + 1)
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key
  return crc16(hashed) % slotCount
}
