// The membership checksum (uber/ringpop-node `membership.computeChecksum`): a stable hash over the
// sorted `name,address,state,incarnation` lines of every member. Two members that hold the same list
// compute the same checksum, whatever order they learned it in, so comparing checksums tells whether
// the cluster has converged.

export interface ChecksumEntry {
  readonly name: string;
  readonly address: string;
  readonly state: string;
  readonly incarnation: number;
}

/**
 * FNV-1a over UTF-16 code units, widened to 52 bits with two interleaved 32-bit lanes so that
 * collisions between different lists stay unlikely even for thousands of members.
 */
function hashText(text: string): number {
  let low = 0x811c9dc5;
  let high = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    low = Math.imul(low ^ c, 0x01000193);
    high = Math.imul(high ^ c ^ (low >>> 13), 0x01000193);
  }
  return (high >>> 12) * 4294967296 + (low >>> 0);
}

function compareNames(a: ChecksumEntry, b: ChecksumEntry): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** A non-negative integer below 2^52; equal lists (in any order) give equal checksums. */
export function membershipChecksum(members: Iterable<ChecksumEntry>): number {
  const sorted = [...members].sort(compareNames);
  let text = '';
  for (const m of sorted) text += `${m.name},${m.address},${m.state},${m.incarnation};`;
  return hashText(text);
}

/** The same hash over a sorted list of names; the ring uses it for its own checksum. */
export function namesChecksum(names: readonly string[]): number {
  return hashText([...names].sort().join(';'));
}
