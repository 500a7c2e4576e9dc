// Keeps one of Node's nextTick objects alive for the life of the process, so that V8 never collects
// the hidden classes ("maps") those objects are built with.
//
// Why: `process.nextTick` builds each queued tick as `{ [async_id_symbol]: …, [trigger_async_id_symbol]:
// …, callback, args }`. V8 records, per computed key of that literal, the one map it was defined on,
// and the first time it sees a different map it gives up for good (megamorphic): from then on every
// nextTick defines its two keys in the runtime, several µs per HTTP request (streams call nextTick a
// handful of times per response). While a server is idle no tick object is alive, and the GCs V8's
// memory reducer runs on an idle heap do not retain maps without instances: the maps die, the next
// tick gets new ones, and the server stays slow until it restarts. Measured on Node 20 with the
// bench's 1 KiB HIT after 20 s idle: 24k req/s instead of 32k for a bare `http` server, and svc the
// same. One live tick object keeps its map chain, and so the recorded maps, alive.
import { executionAsyncResource } from 'node:async_hooks';
import { nodeInternalsAllowed } from '../runtime/node-internals.js';

let kept: object | undefined;

/**
 * Pins the shape of nextTick objects (idempotent). Resolves with the object kept: inside a nextTick
 * callback the execution resource is the tick object itself. With SVC_NODE_INTERNALS off nothing is
 * kept and it resolves with undefined.
 */
export function pinTickObjectShape(): Promise<object | undefined> {
  if (!nodeInternalsAllowed()) return Promise.resolve(undefined);
  if (kept !== undefined) return Promise.resolve(kept);
  return new Promise((resolve) => {
    process.nextTick(() => {
      kept ??= executionAsyncResource();
      resolve(kept);
    });
  });
}
