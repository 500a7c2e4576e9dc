// The data path reads as a straight line (docs/architecture.md, "A request's walk"): a HIT passes
// through at most 8 files of src/ and a MISS through at most 12, and no file is entered twice (no
// call climbs back into a file the request already passed through).
//
// "Passes through" is measured, not declared: while one request is handled, every stack that holds it
// is recorded: the stack at each async resource the request creates (async_hooks init: promises,
// timers, sockets), at the origin request (undici's diagnostics channel) and at each write of the
// answer (writeHead, write, end). A file on such a stack holds the request there. A function that
// is called and returns (a policy rule, a parser, a metric) is a helper: it never holds the request
// at those moments, and is not part of the walk.
//
// One data-plane thread, in this process: a request on a worker thread cannot be traced from here,
// and every thread runs the same files.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { ServerResponse } from 'node:http';
import { startSvc, type SvcUnderTest } from '../support/svc-harness.js';
import { startTestOrigin, type TestOrigin } from '../support/test-origin.js';

/** The src/ files on a stack, outermost first (as `src/proxy/cache-flow.ts`). */
function srcFilesOn(stack: string): string[] {
  const files: string[] = [];
  for (const line of stack.split('\n').reverse()) {
    const file = /\/dist\/(src\/[^:]+)\.js:/.exec(line)?.[1];
    if (file && files.at(-1) !== `${file}.ts`) files.push(`${file}.ts`);
  }
  return files;
}

interface Walk {
  files: Set<string>;
  /** "a → b": a called b while holding the request. */
  calls: Set<string>;
}

let recording: { stacks: string[][] } | undefined;
const stackLimit = Error.stackTraceLimit;

function record(): void {
  if (recording) recording.stacks.push(srcFilesOn(new Error().stack ?? ''));
}

const hook = createHook({
  init() {
    record();
  },
});
const onOriginRequest = (): void => record();
const writers = ['writeHead', 'write', 'end'] as const;
const originals = writers.map((name) => ServerResponse.prototype[name]);

let svc: SvcUnderTest;
let origin: TestOrigin;

before(async () => {
  origin = await startTestOrigin((request) => ({ headers: { 'cache-control': 'max-age=600' }, body: `body of ${request.url}` }));
  svc = await startSvc([origin.url], { config: { workers: 1 } });
  Error.stackTraceLimit = 200;
  hook.enable();
  subscribe('undici:request:create', onOriginRequest);
  writers.forEach((name, index) => {
    const original = originals[index] as (...args: unknown[]) => unknown;
    (ServerResponse.prototype as unknown as Record<string, unknown>)[name] = function (this: ServerResponse, ...args: unknown[]) {
      record();
      return original.apply(this, args);
    };
  });
});

after(async () => {
  writers.forEach((name, index) => ((ServerResponse.prototype as unknown as Record<string, unknown>)[name] = originals[index]));
  unsubscribe('undici:request:create', onOriginRequest);
  hook.disable();
  Error.stackTraceLimit = stackLimit;
  await svc.stop();
  await origin.close();
});

async function walkOf(path: string, expected: string): Promise<Walk> {
  recording = { stacks: [] };
  const answer = await fetch(`${svc.dataUrl}${path}`);
  await answer.text();
  const { stacks } = recording;
  recording = undefined;
  assert.equal(answer.headers.get('x-cache'), expected);
  const walk: Walk = { files: new Set(), calls: new Set() };
  for (const stack of stacks) {
    stack.forEach((file, index) => {
      walk.files.add(file);
      if (index > 0) walk.calls.add(`${stack[index - 1]} → ${file}`);
    });
  }
  return walk;
}

/** Files the request re-enters: those on a cycle of the calls made while holding it. */
function reentered(walk: Walk): string[] {
  const next = new Map<string, string[]>();
  for (const call of walk.calls) {
    const [from, to] = call.split(' → ') as [string, string];
    next.set(from, [...(next.get(from) ?? []), to]);
  }
  const onCycle: string[] = [];
  for (const start of walk.files) {
    const seen = new Set<string>();
    const queue = [...(next.get(start) ?? [])];
    while (queue.length > 0) {
      const file = queue.shift()!;
      if (file === start) {
        onCycle.push(start);
        break;
      }
      if (seen.has(file)) continue;
      seen.add(file);
      queue.push(...(next.get(file) ?? []));
    }
  }
  return onCycle.sort();
}

test('a HIT passes through at most 8 files, each entered once', async (t) => {
  await walkOf('/walk-hit', 'MISS');
  const walk = await walkOf('/walk-hit', 'HIT');
  t.diagnostic(`HIT walk: ${[...walk.files].join(', ')}`);
  assert.ok(walk.files.has('src/proxy/cache-flow.ts'), 'the walk was recorded');
  assert.ok(walk.files.size <= 8, `${walk.files.size} files: ${[...walk.files].join(', ')}`);
  assert.deepEqual(reentered(walk), [], [...walk.calls].join('\n'));
});

test('a MISS passes through at most 12 files, each entered once', async (t) => {
  const walk = await walkOf('/walk-miss', 'MISS');
  t.diagnostic(`MISS walk: ${[...walk.files].join(', ')}`);
  assert.ok(walk.files.has('src/fill/fill.ts'), 'the walk was recorded');
  assert.ok(walk.files.size <= 12, `${walk.files.size} files: ${[...walk.files].join(', ')}`);
  assert.deepEqual(reentered(walk), [], [...walk.calls].join('\n'));
});
