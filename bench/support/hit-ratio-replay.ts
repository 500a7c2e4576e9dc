// Replaying one request stream two ways, to compare hit ratios: through a real node over HTTP, and
// through the hot store in this process. Used by bench/node-hit-ratio.ts and by the test that a node
// of several threads holds each object once (its hit ratio is one tier's, not that of halves).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { entryFields, type CacheEntry } from '../../src/cache/entry.js';
import { createHotStore, type HotStore } from '../../src/store/hot-store.js';

export const ASSET_BYTES = 1024;

/** An origin that answers /asset/<rank> with 1 KiB, cacheable for an hour. */
export async function startAssetOrigin(): Promise<{ url: string; close: () => Promise<void> }> {
  const body = Buffer.alloc(ASSET_BYTES, 'x');
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'max-age=3600', 'content-length': String(ASSET_BYTES) });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The share of `stream` a node at `dataUrl` answers with X-Cache HIT, over `connections` keep-alive
 * connections (spread by the kernel over the node's threads), `window` requests in flight at most, in
 * the stream's order.
 */
export async function replayThroughNode(dataUrl: string, stream: Uint32Array, connections: number, window: number): Promise<number> {
  const pool = new Pool(dataUrl, { connections, pipelining: 1 });
  let hits = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < stream.length) {
      const rank = stream[next++]!;
      const answer = await pool.request({ method: 'GET', path: `/asset/${rank}` });
      await answer.body.dump();
      if (answer.headers['x-cache'] === 'HIT') hits++;
    }
  };
  await Promise.all(Array.from({ length: window }, worker));
  await pool.close();
  return hits / stream.length;
}

/** The hit ratio of `stream` through `stores`, each request to the store `pick` names; a miss stores. */
export function replayInProcess(stream: Uint32Array, stores: HotStore[], entryOf: (rank: number) => CacheEntry, pick: () => number = () => 0): number {
  let hits = 0;
  for (const rank of stream) {
    const store = stores[pick()]!;
    if (store.variants(entryOf(rank).key).length > 0) hits++;
    else store.put(entryOf(rank));
  }
  return hits / stream.length;
}

/** Entries like `sample` (one the node stored), for every rank: same fields, each its own key. */
export function entriesLike(sample: CacheEntry, keyOf: (rank: number) => string): (rank: number) => CacheEntry {
  const fields = entryFields(sample);
  const made = new Map<number, CacheEntry>();
  return (rank) => {
    let entry = made.get(rank);
    if (entry === undefined) made.set(rank, (entry = { ...fields, key: keyOf(rank) }));
    return entry;
  };
}

/** One hot tier of `maxBytes`, or `parts` tiers of a share of it each. */
export function hotTiers(maxBytes: number, parts: number): HotStore[] {
  return Array.from({ length: parts }, () => createHotStore({ maxBytes: Math.floor(maxBytes / parts) }));
}
