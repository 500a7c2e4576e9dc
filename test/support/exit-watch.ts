// Loaded into every test file's process by test/run.ts (`--import`). Once the file's tests have ended,
// a process still running a minute later holds something its tests opened and did not close: a
// server, a socket, a child process. Node's test runner waits for such a file without a limit, so a
// test whose setup threw before its `try` (its origins left listening) used to hang the whole suite.
// This fails the file instead, naming what is still open; it never ends a process that exits on its
// own, and a leak in a passing test fails too, as it always did, now with a bound.
import { after } from 'node:test';
import { isMainThread } from 'node:worker_threads';

/**
 * Far beyond what any file's own closing takes (SIGTERM to a five-node cluster, a warm tier's flush);
 * SVC_TEST_EXIT_GRACE_MS shortens it for the test of this watch.
 */
const EXIT_GRACE_MS = Number(process.env.SVC_TEST_EXIT_GRACE_MS ?? 60_000);

function failIfStillRunning(): void {
  const watch = setTimeout(() => {
    console.error(`# ${process.argv[1] ?? 'this test file'} still runs ${EXIT_GRACE_MS / 1000} s after its tests ended; still open: ${process.getActiveResourcesInfo().join(', ')}`);
    process.exit(1);
  }, EXIT_GRACE_MS);
  // The watch itself must not be what keeps the process alive.
  watch.unref();
}

// Worker threads inherit `--import` (a data plane's threads started in a test's process): they are
// not test files, and their end is their owner's.
if (isMainThread) after(failIfStillRunning);
