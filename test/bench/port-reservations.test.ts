// Ports the tests draw are reserved across processes: one held by a live process is refused to
// every other, one whose process exited is free again, and one whose process was killed (its file
// left behind) is reclaimed. Each process here is a real child holding a reservation in a directory
// of the test's own, so the suite's shared reservations are not touched.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PortReservations } from '../../bench/support/free-port.js';

const MODULE = new URL('../../bench/support/free-port.js', import.meta.url).href;
const PORT = 24_680;

/** A child that reserves PORT in `directory`, says whether it got it, then waits for its stdin to end. */
async function holder(directory: string): Promise<{ child: ChildProcess; reserved: boolean }> {
  const script = `
    const { PortReservations } = await import(${JSON.stringify(MODULE)});
    const reserved = new PortReservations(${JSON.stringify(directory)}).reserve(${PORT});
    process.stdout.write(reserved ? 'reserved\\n' : 'refused\\n');
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { child, reserved: line.toString().trim() === 'reserved' };
}

describe('port reservations', { timeout: 30_000 }, () => {
  let directory: string;

  before(async () => {
    directory = await mkdtemp(join(tmpdir(), 'svc-ports-test-'));
  });

  after(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  test('held by a live process: refused to the others; free once it exits', async () => {
    const first = await holder(directory);
    assert.equal(first.reserved, true);
    assert.equal(readFileSync(join(directory, String(PORT)), 'utf8'), String(first.child.pid));
    const mine = new PortReservations(directory);
    assert.equal(mine.reserve(PORT), false, 'refused here');
    const second = await holder(directory);
    assert.equal(second.reserved, false, 'refused to another process');
    second.child.stdin!.end();
    first.child.stdin!.end();
    await Promise.all([once(first.child, 'exit'), once(second.child, 'exit')]);
    assert.equal(existsSync(join(directory, String(PORT))), false, 'the file went with its process');
    assert.equal(mine.reserve(PORT), true);
    assert.equal(mine.reserve(PORT), false, 'not twice, even to the process that holds it');
    mine.release(PORT);
  });

  test('held by a process that was killed: reclaimed by the next one to ask', async () => {
    const killed = await holder(directory);
    assert.equal(killed.reserved, true);
    killed.child.kill('SIGKILL');
    await once(killed.child, 'exit');
    assert.equal(readFileSync(join(directory, String(PORT)), 'utf8'), String(killed.child.pid), 'a kill leaves the file');
    const mine = new PortReservations(directory);
    assert.equal(mine.reserve(PORT), true);
    assert.equal(readFileSync(join(directory, String(PORT)), 'utf8'), String(process.pid));
    mine.release(PORT);
    assert.equal(existsSync(join(directory, String(PORT))), false);
  });
});
