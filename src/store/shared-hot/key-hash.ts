// The hash that places a primary key in the hot tier's index: 32-bit FNV-1a over the key's UTF-16
// code units. It must be the same in every thread of a node, and cheap on every lookup; collisions
// only cost a comparison (every candidate record's key is compared byte for byte).

export function keyHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}
