// Reads a refreshed body whole, within the per-object limit. Unlike the proxy's relay there is no
// client to keep streaming to, so a body past the limit is abandoned at once and its connection freed.
import type { Readable } from 'node:stream';

export type CollectedBody = { body: Buffer } | { failure: 'too_large' | 'body_incomplete' };

export async function collectBody(body: Readable, limitBytes: number): Promise<CollectedBody> {
  const chunks: Buffer[] = [];
  let collected = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      collected += chunk.length;
      if (collected > limitBytes) {
        body.destroy();
        return { failure: 'too_large' };
      }
      chunks.push(chunk);
    }
  } catch {
    // The origin's body failed or ended early: nothing is stored.
    return { failure: 'body_incomplete' };
  }
  return { body: Buffer.concat(chunks, collected) };
}
