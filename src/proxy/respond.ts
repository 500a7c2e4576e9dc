// Writing answers to data-plane clients: short plain-text errors from svc itself, and origin answers
// passed through.
import type { Exchange } from './exchange.js';

/** An answer svc makes itself (no route, origin down…): short, plain text, never cached downstream. */
export function sendProxyError(exchange: Exchange, status: number, message: string): void {
  const { response } = exchange;
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const body = `svc: ${message}\n`;
  response.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-cache': exchange.cacheResult,
  });
  exchange.bytesOut += Buffer.byteLength(body);
  response.end(exchange.request.method === 'HEAD' ? undefined : body);
}
