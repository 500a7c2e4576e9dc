// A bare Node `http` server answering one fixed body from memory: Node's own ceiling on this machine,
// and also the origin svc fronts in the benchmark. Usage: node fixed-body-server.js <port> <bytes>.
import { createServer } from 'node:http';
import { pinTickObjectShape } from '../../src/node/tick-object-shape.js';

const port = Number(process.argv[2] ?? 0);
const size = Number(process.argv[3] ?? 1024);
const body = Buffer.alloc(size, 'x');
const headers = {
  'content-type': 'application/octet-stream',
  'content-length': String(body.length),
  'cache-control': 'public, max-age=3600',
  etag: '"bench"',
};

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
