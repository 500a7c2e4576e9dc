import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { membershipChecksum, namesChecksum } from '../../cluster/math/membership-checksum.js';
import type { ChecksumEntry } from '../../cluster/math/membership-checksum.js';

const members: ChecksumEntry[] = [
  { name: 'a', address: '10.0.0.1:7946', state: 'alive', incarnation: 1 },
  { name: 'b', address: '10.0.0.2:7946', state: 'suspect', incarnation: 4 },
  { name: 'c', address: '10.0.0.3:7946', state: 'dead', incarnation: 0 },
];

describe('membershipChecksum', () => {
  test('is the same whatever order the members come in', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(members, { minLength: 3, maxLength: 3 }), (order) => {
        return membershipChecksum(order) === membershipChecksum(members);
      }),
    );
  });

  const changes: [what: string, change: (list: ChecksumEntry[]) => ChecksumEntry[]][] = [
    ['a state', (l) => l.map((m, i) => (i === 0 ? { ...m, state: 'suspect' } : m))],
    ['an incarnation', (l) => l.map((m, i) => (i === 1 ? { ...m, incarnation: 5 } : m))],
    ['an address', (l) => l.map((m, i) => (i === 2 ? { ...m, address: '10.0.0.9:7946' } : m))],
    ['a name', (l) => l.map((m, i) => (i === 0 ? { ...m, name: 'z' } : m))],
    ['a missing member', (l) => l.slice(1)],
  ];
  for (const [what, change] of changes) {
    test(`changes with ${what}`, () => {
      assert.notEqual(membershipChecksum(change(members)), membershipChecksum(members));
    });
  }

  test('is a non-negative safe integer', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ name: fc.string(), address: fc.string(), state: fc.constantFrom('alive', 'dead'), incarnation: fc.nat() })), (list) => {
        const sum = membershipChecksum(list);
        return Number.isSafeInteger(sum) && sum >= 0;
      }),
    );
  });

  test('namesChecksum ignores order and sees differences', () => {
    assert.equal(namesChecksum(['b', 'a', 'c']), namesChecksum(['a', 'b', 'c']));
    assert.notEqual(namesChecksum(['a', 'b']), namesChecksum(['a', 'b', 'c']));
  });
});
