// A bare Node `http` server answering one fixed response from memory: Node's own ceiling on this
// machine, and also the origin svc fronts in the benchmarks.
// Usage: node fixed-body-server.js <port> <bytes> [fields]
// `fields`, a JSON object of header fields, replaces the origin's own: the benchmarks give the
// ceiling the fields of svc's HIT, so that it answers the same bytes svc does.
import { createServer } from 'node:http';
import { pinTickObjectShape } from '../../src/node/tick-object-shape.js';

const port = Number(process.argv[2] ?? 0);
const size = Number(process.argv[3] ?? 1024);
const body = Buffer.alloc(size, 'x');
const headers: Record<string, string | string[]> =
  process.argv[4] === undefined
    ? {
        'content-type': 'application/octet-stream',
        'content-length': String(body.length),
        'cache-control': 'public, max-age=3600',
        etag: '"bench"',
      }
    : (JSON.parse(process.argv[4]) as Record<string, string | string[]>);

// As svc does: an idle spell must not slow the ceiling down either (see the module).
await pinTickObjectShape();
const server = createServer((_request, response) => {
  response.writeHead(200, headers);
  response.end(body);
});
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
