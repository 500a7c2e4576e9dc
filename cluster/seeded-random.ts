// The seeded generator behind `Random`: sfc32 (Chris Doty-Humphrey's Small Fast Counting generator,
// PractRand-clean, four 32-bit words of state) seeded through cyrb128, a string hash that spreads any
// seed text over all 128 bits. Forks hash the parent's seed text with the fork's label, so a fork
// depends only on (seed, label) and never on how many draws the parent has made.
// This file, system-clock.ts and security/system-nonces.ts are the only places in cluster/ that may touch
// real entropy.
import { randomInt } from 'node:crypto';
import type { Random } from './random.js';

const TWO_POW_32 = 4294967296;

/** cyrb128 (bryc, public domain): four independent 32-bit hashes of `text`. */
function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

class Sfc32Random implements Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(private readonly seedText: string) {
    [this.a, this.b, this.c, this.d] = cyrb128(seedText);
    // The reference implementation discards the first outputs so weak seeds mix fully.
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  private nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  next(): number {
    return this.nextUint32() / TWO_POW_32;
  }

  int(bound: number): number {
    if (!Number.isInteger(bound) || bound <= 0) {
      throw new RangeError(`Random.int bound must be a positive integer, got ${bound}`);
    }
    return Math.floor(this.next() * bound);
  }

  fork(label: string): Random {
    return new Sfc32Random(`${this.seedText}\u0000${label}`);
  }
}

/** A seeded generator: the same seed always yields the same sequence, on every platform. */
export function createRandom(seed: number | string): Random {
  return new Sfc32Random(typeof seed === 'number' ? `n:${seed}` : `s:${seed}`);
}

/** A fresh seed from the operating system's entropy, for production members (48 bits, exact in a double). */
export function randomSeed(): number {
  return randomInt(0, 2 ** 48 - 1);
}
