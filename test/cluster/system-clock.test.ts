import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { systemClock } from '../../cluster/system-clock.js';

describe('systemClock', () => {
  test('now never goes backwards', () => {
    let previous = systemClock.now();
    for (let i = 0; i < 1000; i++) {
      const now = systemClock.now();
      assert.ok(now >= previous);
      previous = now;
    }
  });

  test('a timer fires once after its delay', async () => {
    const start = systemClock.now();
    const firedAt = await new Promise<number>((resolve) => {
      systemClock.setTimer(20, () => resolve(systemClock.now()));
      // The timer is unref'd, so something else must keep the test process alive meanwhile.
      setTimeout(() => undefined, 100);
    });
    assert.ok(firedAt - start >= 19, `fired after ${firedAt - start} ms`);
  });

  test('a cleared timer never fires, and clearing twice is harmless', async () => {
    let fired = false;
    const handle = systemClock.setTimer(5, () => {
      fired = true;
    });
    systemClock.clearTimer(handle);
    systemClock.clearTimer(handle);
    // A barrier, not a guess: a timer of the same delay set later fires after the cleared one would have.
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(fired, false);
  });
});
