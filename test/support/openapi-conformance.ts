// Issue 21 item 2: docs/openapi.yaml is the contract every admin answer the test suite sees is held
// to, not only the answers of the OpenAPI test. The node harnesses register each admin address they
// start; from then on every answer from such an address, read through undici in this process (the
// tests' HTTP helper and the typed admin client), is checked against the document: a documented
// operation must answer a documented status with the documented media type and body schema, and any
// other path the documented 404 or 405 error. An answer that differs fails the call that got it.
import { DecoratorHandler, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { loadOpenApi, OpenApiValidator, resolveResponse } from '../api/support/openapi-validator.js';

const document = loadOpenApi();
const validator = new OpenApiValidator(document);
const adminOrigins = new Set<string>();
let installed = false;

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The document's operations of a request path: its own entry, or the templated path it fills. */
function pathItem(path: string): (typeof document.paths)[string] | undefined {
  const exact = document.paths[path];
  if (exact) return exact;
  const segments = path.split('/');
  for (const [template, item] of Object.entries(document.paths)) {
    const parts = template.split('/');
    if (parts.length !== segments.length) continue;
    if (parts.every((part, index) => (part.startsWith('{') && part.endsWith('}') ? segments[index] !== '' : part === segments[index]))) return item;
  }
  return undefined;
}

/** Why the answer differs from the document, or undefined when it conforms. */
export function conformanceProblem(method: string, target: string, status: number, headers: IncomingHttpHeaders, body: Buffer | undefined): string | undefined {
  const path = target.split('?')[0]!;
  const label = `${method} ${target} → ${status}`;
  const operation = pathItem(path)?.[method.toLowerCase() === 'head' ? 'get' : method.toLowerCase()];
  const json = (): unknown => {
    try {
      return JSON.parse(body?.toString('utf8') ?? '');
    } catch {
      return undefined;
    }
  };
  // The document's general rule: any path answers 404 where no endpoint is mounted (an operation that
  // is configured off) and 405 for another method, with the error body.
  if (status === 404 || status === 405) {
    if (method === 'HEAD') return undefined;
    const errors = validator.errors(document.components.schemas.Error, json());
    return errors.length === 0 ? undefined : `${label}: not the documented error body: ${errors.join('; ')}`;
  }
  if (!operation) return `${label}: no such operation in docs/openapi.yaml`;
  const documented = operation.responses[String(status)];
  if (!documented) return `${label}: status ${status} is not documented for this operation`;
  const response = resolveResponse(document, documented);
  for (const name of Object.keys(response.headers ?? {})) {
    if (headerValue(headers, name.toLowerCase()) === undefined) return `${label}: header ${name} is documented but missing`;
  }
  if (!response.content || method === 'HEAD') return undefined;
  const mediaType = headerValue(headers, 'content-type')?.split(';')[0]?.trim() ?? '';
  const content = response.content[mediaType];
  if (!content) return `${label}: media type ${JSON.stringify(mediaType)} is not documented`;
  if (mediaType !== 'application/json' || !content.schema || body === undefined) return undefined;
  const errors = validator.errors(content.schema, json());
  return errors.length === 0 ? undefined : `${label}: ${errors.join('; ')} in ${body.toString('utf8').slice(0, 300)}`;
}

interface ResponseHandler {
  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void;
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void;
  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void;
  onResponseError(controller: Dispatcher.DispatchController, error: Error): void;
}
/** undici's DecoratorHandler forwards the handler API of undici 7; its typings still show the old one. */
const ForwardingHandler = DecoratorHandler as unknown as new (handler: Dispatcher.DispatchHandler) => ResponseHandler;

class ConformanceHandler extends ForwardingHandler {
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] | undefined;

  constructor(
    handler: Dispatcher.DispatchHandler,
    private readonly method: string,
    private readonly target: string,
  ) {
    super(handler);
  }

  override onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    this.#status = statusCode;
    this.#headers = headers;
    // Only JSON bodies are read (a heap snapshot is not held in memory twice).
    if (headerValue(headers, 'content-type')?.startsWith('application/json')) this.#chunks = [];
    super.onResponseStart(controller, statusCode, headers, statusMessage);
  }

  override onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks?.push(chunk);
    super.onResponseData(controller, chunk);
  }

  override onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    const problem = conformanceProblem(this.method, this.target, this.#status, this.#headers, this.#chunks && Buffer.concat(this.#chunks));
    if (problem === undefined) super.onResponseEnd(controller, trailers);
    else super.onResponseError(controller, new Error(`the admin answer differs from docs/openapi.yaml: ${problem}`));
  }
}

/**
 * Checks every later answer from this admin address against docs/openapi.yaml, until
 * stopCheckingAdminAnswers: the port may be handed to a data-plane listener once the node stops.
 */
export function checkAdminAnswers(adminUrl: string): void {
  adminOrigins.add(new URL(adminUrl).origin);
  if (installed) return;
  installed = true;
  setGlobalDispatcher(
    getGlobalDispatcher().compose((dispatch) => (options, handler) => {
      const origin = options.origin === undefined ? undefined : new URL(String(options.origin)).origin;
      if (origin === undefined || !adminOrigins.has(origin)) return dispatch(options, handler);
      return dispatch(options, new ConformanceHandler(handler, options.method, options.path));
    }),
  );
}

/** The admin listener at this address is closed: its port may serve anything next. */
export function stopCheckingAdminAnswers(adminUrl: string): void {
  adminOrigins.delete(new URL(adminUrl).origin);
}
