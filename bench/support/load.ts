// One measured load of one URL with autocannon, after a short warm-up so JIT and keep-alive
// connections are settled; with a server's pid, also the server's CPU per request.
import autocannon from 'autocannon';
import { cpuTimeMs } from './processes.js';

export interface LoadFigures {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** Server CPU (user + system) per request, in µs: its own cost, whatever else the machine does. */
  cpuUsPerRequest?: number;
}

export interface LoadOptions {
  connections: number;
  seconds: number;
  /** The server process, to read its CPU time from /proc. */
  serverPid?: number | undefined;
  /** Load before the measured run, so JIT and keep-alive connections are settled; 2 s by default. */
  warmUpSeconds?: number;
}

const WARM_UP_SECONDS = 2;

export async function measureLoad(name: string, url: string, options: LoadOptions): Promise<LoadFigures> {
  const { connections, seconds, serverPid, warmUpSeconds = WARM_UP_SECONDS } = options;
  if (warmUpSeconds > 0) await autocannon({ url, connections, duration: warmUpSeconds });
  const cpuBefore = serverPid === undefined ? 0 : cpuTimeMs(serverPid);
  const result = await autocannon({ url, connections, duration: seconds });
  const figures: LoadFigures = {
    name,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
  if (serverPid !== undefined) {
    figures.cpuUsPerRequest = ((cpuTimeMs(serverPid) - cpuBefore) * 1000) / Math.max(1, result.requests.total);
  }
  return figures;
}
