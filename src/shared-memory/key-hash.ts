// Hashes of strings that every thread of a node computes alike: 32-bit FNV-1a over the string's UTF-16
// code units, cheap on every lookup. keyHash places a primary key in the hot tier's index (collisions
// only cost a comparison: every candidate record's key is compared byte for byte); wideHash names an
// entry of a table that keeps no string at all (shared-counters.ts), where 52 bits make a collision
// negligible.

export function keyHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}

/** 52 bits: FNV-1a, and a second FNV-1a from another offset basis for the low 20 bits. */
export function wideHash(text: string): number {
  let low = 0x9dc5811c;
  for (let i = 0; i < text.length; i += 1) {
    low ^= text.charCodeAt(i);
    low = Math.imul(low, 0x01000193);
  }
  return (keyHash(text) >>> 0) * 2 ** 20 + ((low >>> 12) & 0xfffff);
}
