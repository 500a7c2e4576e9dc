// A stand-in OTLP/HTTP collector for the benchmarks: it reads every export to the end and answers
// 200 with an empty JSON body, as a healthy collector does, and keeps nothing.
// Usage: node otlp-sink-server.js <port>
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
    response.end('{}');
  });
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
