// Reading a JSON request body for the admin API: the media type first (415), then the size bound
// (413, before a byte is buffered when Content-Length already tells), then the JSON syntax (400
// `malformed_json`) and finally the schema (400 `invalid_request`, naming the field).
import type { IncomingMessage } from 'node:http';
import * as v from 'valibot';
import { ADMIN_BODY_MAX_BYTES } from '../api/limits.js';
import { ApiError } from '../api/api-error.js';

export class UnsupportedMediaTypeError extends ApiError {
  constructor(received: string | undefined) {
    super(
      415,
      'unsupported_media_type',
      `the request body must be Content-Type: application/json, got ${received === undefined ? 'none' : JSON.stringify(received)}`,
    );
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(what: string) {
    // The rest of an oversized body is not read, so the connection cannot be reused.
    super(413, 'payload_too_large', what, { Connection: 'close' });
  }
}

export class MalformedJsonError extends ApiError {
  constructor(detail: string) {
    super(400, 'malformed_json', `the request body is not valid JSON: ${detail}`);
  }
}

export class InvalidRequestError extends ApiError {
  constructor(message: string) {
    super(400, 'invalid_request', message);
  }
}

function isJsonMediaType(contentType: string | undefined): boolean {
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

/** `urls[3]: expected …` for the first problem valibot found, and how many more there are. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  const [first] = issues;
  if (!first) return 'the request does not match its schema';
  const path = (first.path ?? [])
    .map((item, index) => (typeof item.key === 'number' ? `[${item.key}]` : `${index === 0 ? '' : '.'}${String(item.key)}`))
    .join('');
  // An object-level issue already names its field ("unknown field …", "required field … is missing").
  const named = first.type === 'strict_object' || first.type === 'object' || path === '' ? first.message : `${path}: ${first.message}`;
  return issues.length > 1 ? `${named} (and ${issues.length - 1} more problems)` : named;
}

/** The whole request body, at most `maxBytes` (PayloadTooLargeError beyond, without buffering the rest). */
export async function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new PayloadTooLargeError(`the request body is ${declared} bytes; the limit is ${maxBytes} bytes`);
  }
  // Events rather than `for await`: leaving that loop early destroys the socket, and with it the 413.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      // The rest is discarded until the 413 is sent and the connection closed.
      request.off('data', onData).off('end', onEnd).resume();
      reject(new PayloadTooLargeError(`the request body exceeds the limit of ${maxBytes} bytes`));
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks, size));
    request.on('data', onData).on('end', onEnd).once('error', reject);
  });
}

/** Reads, parses and validates a JSON body; the result is the schema's typed output. */
export async function readJsonBody<const TSchema extends v.GenericSchema>(
  request: IncomingMessage,
  schema: TSchema,
  maxBytes: number = ADMIN_BODY_MAX_BYTES,
): Promise<v.InferOutput<TSchema>> {
  const contentType = request.headers['content-type'];
  if (!isJsonMediaType(contentType)) throw new UnsupportedMediaTypeError(contentType);
  const raw = await readBody(request, maxBytes);
  if (raw.length === 0) throw new MalformedJsonError('the body is empty; expected a JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new MalformedJsonError((error as Error).message);
  }
  const result = v.safeParse(schema, parsed);
  if (!result.success) throw new InvalidRequestError(describeIssues(result.issues));
  return result.output;
}
