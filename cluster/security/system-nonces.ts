// Nonces for sealing from the operating system's CSPRNG: the default of the sealed transport. With
// seeded-random.ts and system-clock.ts, one of the three places in cluster/ that touch the machine;
// the simulator hands the sealed transport a seeded source instead, so its runs replay.
import { randomFillSync } from 'node:crypto';

export function systemNonces(target: Uint8Array): void {
  randomFillSync(target);
}
