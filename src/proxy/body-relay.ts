// Streams an origin body to the client while keeping a copy for the cache, in one pass and without
// buffering it twice. The copy is given up once it passes the per-object limit (the rest is only
// relayed). A body that ends early is never returned, so no truncated entry can be stored; a client
// that goes away does not stop the copy, so the fetch still fills the cache for those waiting on it.
import type { ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import type { Exchange } from './exchange.js';

export interface RelayResult {
  /** The whole body, when it was complete and within the limit. */
  body: Buffer | undefined;
  /** False when the origin's body failed or ended early. */
  complete: boolean;
}

/**
 * `exchange` is undefined when nobody reads the body (a HEAD that filled the cache). The response's
 * head must already be written.
 */
export async function relayAndCollect(body: Readable, exchange: Exchange | undefined, limitBytes: number): Promise<RelayResult> {
  const response: ServerResponse | undefined = exchange?.response;
  let chunks: Buffer[] | undefined = [];
  let collected = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (chunks) {
        collected += chunk.length;
        if (collected > limitBytes) chunks = undefined;
        else chunks.push(chunk);
      }
      const clientGone = !response || response.destroyed || response.writableEnded;
      if (clientGone) {
        if (!chunks) {
          body.destroy();
          return { body: undefined, complete: false };
        }
        continue;
      }
      exchange!.bytesOut += chunk.length;
      if (!response.write(chunk)) await Promise.race([once(response, 'drain'), once(response, 'close')]);
    }
  } catch {
    // The origin's body failed mid-way: the client gets a cut connection, the cache gets nothing.
    response?.destroy();
    return { body: undefined, complete: false };
  }
  if (response && !response.destroyed) response.end();
  return { body: chunks ? Buffer.concat(chunks, collected) : undefined, complete: true };
}
