/** Redis Cluster has 16384 hash slots; a key's slot is CRC16(key) mod 16384. */
export const CLUSTER_SLOTS = 16_384;

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), the variant Redis Cluster uses
// (cluster spec, "Keys distribution model"). One table, built once at load.
const CRC16_TABLE = buildCrc16Table();

function buildCrc16Table(): Uint16Array {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte += 1) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit += 1) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    table[byte] = crc;
  }
  return table;
}

function crc16(bytes: Uint8Array, start: number, end: number): number {
  let crc = 0;
  for (let i = start; i < end; i += 1) {
    crc = ((crc << 8) & 0xffff) ^ (CRC16_TABLE[((crc >> 8) ^ (bytes[i] ?? 0)) & 0xff] ?? 0);
  }
  return crc;
}

/**
 * The Redis Cluster hash slot of a key (or a sharded pub/sub channel), the same number
 * `CLUSTER KEYSLOT` answers. Hash tags count: when the key holds `{...}` with at least one byte
 * between the first `{` and the next `}`, only those bytes are hashed, so `auction:{42}:bids` and
 * `auction:{42}:history` share a slot. Strings are hashed as UTF-8, as ioredis sends them.
 */
export function keySlot(key: string | Uint8Array): number {
  const bytes = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const open = bytes.indexOf(0x7b); // '{'
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1); // '}'
    if (close > open + 1) return crc16(bytes, open + 1, close) % CLUSTER_SLOTS;
  }
  return crc16(bytes, 0, bytes.length) % CLUSTER_SLOTS;
}
