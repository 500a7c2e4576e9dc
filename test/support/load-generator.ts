// A small wrk-like load for tests that must see every failure: several keep-alive connections, each
// sending its next request as soon as the last answer is in, and a stream of requests each on a
// connection of its own. Every request is counted: answered (by status), or failed, by error code
// (ECONNREFUSED, ECONNRESET…). Bounded: it stops when asked, or after `maxMs` whatever happens.
import { Agent, request } from 'node:http';

export interface LoadOptions {
  /** `http://host:port` of the node. */
  url: string;
  /** The paths requested, in turn. */
  paths: readonly string[];
  keepAliveConnections: number;
  /** Requests in flight at once on connections of their own. */
  newConnectionStreams: number;
  /** The load stops by itself after this long. */
  maxMs: number;
  /** Each request gives up after this long (counted as a failure). */
  requestTimeoutMs: number;
}

export interface LoadReport {
  requests: number;
  /** Answers by status. */
  statuses: Record<number, number>;
  /** Failed requests by error code (or message when there is none). */
  failures: Record<string, number>;
  /** Requests sent on a connection of their own. */
  newConnections: number;
}

export interface RunningLoad {
  /** The report so far. */
  readonly report: LoadReport;
  /** Stops sending, and resolves with the report once every request in flight is done. */
  stop(): Promise<LoadReport>;
}

export function startLoad(options: LoadOptions): RunningLoad {
  const report: LoadReport = { requests: 0, statuses: {}, failures: {}, newConnections: 0 };
  let stopping = false;
  const deadline = setTimeout(() => (stopping = true), options.maxMs);
  let next = 0;
  const agents: Agent[] = [];

  const one = (agent: Agent | false): Promise<void> =>
    new Promise((resolve) => {
      const path = options.paths[next++ % options.paths.length]!;
      report.requests++;
      if (agent === false) report.newConnections++;
      const fail = (code: string): void => {
        report.failures[code] = (report.failures[code] ?? 0) + 1;
        resolve();
      };
      const sent = request(`${options.url}${path}`, { agent, timeout: options.requestTimeoutMs }, (answer) => {
        answer.resume();
        answer.on('end', () => {
          report.statuses[answer.statusCode!] = (report.statuses[answer.statusCode!] ?? 0) + 1;
          resolve();
        });
        answer.on('error', (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
      });
      sent.on('timeout', () => sent.destroy(Object.assign(new Error('request timed out'), { code: 'TIMEOUT' })));
      sent.on('error', (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
      sent.end();
    });

  const loop = async (agent: Agent | false): Promise<void> => {
    while (!stopping) await one(agent);
  };
  const loops: Promise<void>[] = [];
  for (let i = 0; i < options.keepAliveConnections; i++) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    loops.push(loop(agent));
  }
  for (let i = 0; i < options.newConnectionStreams; i++) loops.push(loop(false));

  return {
    report,
    async stop() {
      stopping = true;
      await Promise.all(loops);
      clearTimeout(deadline);
      for (const agent of agents) agent.destroy();
      return report;
    },
  };
}
