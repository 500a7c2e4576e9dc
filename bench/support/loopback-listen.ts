// Preloaded (`--import`) into a foreign server that listens on a bare port, which Node binds on every
// interface: the port is bound on 127.0.0.1 instead, so a benchmark's servers stay on loopback.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
  const [port, host] = args;
  const barePort = (typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port))) && typeof host !== 'string';
  if (barePort) args.splice(0, 1, Number(port), '127.0.0.1');
  return listen.apply(this, args as Parameters<typeof listen>);
} as typeof listen;
