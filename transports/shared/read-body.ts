// Reads a byte stream into one Buffer, copying each chunk once. When the length is announced
// (Content-Length) the Buffer is allocated up front, so a 50 MiB peer-fetch body is never buffered
// twice (no chunk list followed by a concatenation); otherwise chunks are collected and joined once.

/** A body is larger than the bound its reader accepts. */
export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
  readonly code = 'body_too_large';
  constructor(readonly maxBytes: number) {
    super(`body exceeds ${maxBytes} bytes`);
  }
}

/** A body ended before the length it announced. */
export class TruncatedBodyError extends Error {
  override readonly name = 'TruncatedBodyError';
  readonly code = 'body_truncated';
  constructor(
    readonly receivedBytes: number,
    readonly expectedBytes: number,
  ) {
    super(`body ended after ${receivedBytes} of ${expectedBytes} announced bytes`);
  }
}

export async function readBody(
  chunks: AsyncIterable<Uint8Array>,
  announcedBytes: number | null,
  maxBytes: number,
): Promise<Buffer> {
  if (announcedBytes !== null) {
    if (announcedBytes > maxBytes) throw new BodyTooLargeError(maxBytes);
    const body = Buffer.allocUnsafe(announcedBytes);
    let offset = 0;
    for await (const chunk of chunks) {
      if (offset + chunk.byteLength > announcedBytes) throw new BodyTooLargeError(announcedBytes);
      body.set(chunk, offset);
      offset += chunk.byteLength;
    }
    if (offset !== announcedBytes) throw new TruncatedBodyError(offset, announcedBytes);
    return body;
  }
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.byteLength;
    if (total > maxBytes) throw new BodyTooLargeError(maxBytes);
    parts.push(chunk);
  }
  return Buffer.concat(parts, total);
}

/** A Content-Length header as a byte count, or null when absent or not a plain decimal number. */
export function announcedLength(header: string | string[] | undefined): number | null {
  if (typeof header !== 'string' || !/^\d{1,15}$/.test(header)) return null;
  return Number(header);
}
