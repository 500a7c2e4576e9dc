// An origin answering every request with one large body of a given size, generated as it is sent (one
// 1 MiB buffer written again and again, with back-pressure), so the origin itself holds next to
// nothing whatever the size. For the memory benchmarks of a miss and of a peer fetch.
// Usage: node large-body-server.js <port> <bytes>
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const size = Number(process.argv[3] ?? 1024 * 1024 * 1024);
const block = Buffer.alloc(1024 * 1024, 'x');

const server = createServer((request, response) => {
  request.resume();
  response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size), 'cache-control': 'public, max-age=3600' });
  if (request.method === 'HEAD') return void response.end();
  let sent = 0;
  const write = (): void => {
    while (sent < size) {
      const part = size - sent >= block.length ? block : block.subarray(0, size - sent);
      sent += part.length;
      if (!response.write(part)) return void response.once('drain', write);
    }
    response.end();
  };
  write();
});
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
