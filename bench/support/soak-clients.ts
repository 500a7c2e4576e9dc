// The soak's load: a bounded number of clients, each on one keep-alive connection of its own (a
// node:http Agent with one socket; a connection that breaks is replaced by a new one on the next
// request), each paced to its share of the target rate. A client that falls behind skips the slots it
// missed rather than bursting to catch up, so a slow node gets fewer requests, never a pile-up; the
// latency is each request's own, from the moment it is sent to the last byte of its body. Every
// answer is checked: status 200, and the body the origin sent for that path and variant.
import { Agent, request as httpRequest } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { expectedBody } from './soak-content.js';
import type { SoakMix, SoakRequest } from './soak-mix.js';
import type { ConnectionFacts, SoakRecorder } from './soak-record.js';

export interface SoakClientsOptions {
  dataUrl: string;
  connections: number;
  requestsPerSecond: number;
  mix: SoakMix;
  recorder: SoakRecorder;
  /** A request not answered whole within this is a failure (`timeout`). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

type Outcome = { ok: true; cacheResult: string } | { ok: false; what: string };

export class SoakClients {
  #stopping = false;
  #connectionIds = 0;
  readonly #connections = new WeakMap<Socket, ConnectionFacts>();
  readonly #loops: Promise<void>[] = [];
  readonly #agents: Agent[] = [];
  readonly #port: number;
  readonly #host: string;

  constructor(private readonly options: SoakClientsOptions) {
    const url = new URL(options.dataUrl);
    this.#host = url.hostname;
    this.#port = Number(url.port);
  }

  start(): void {
    const { connections, requestsPerSecond } = this.options;
    const intervalMs = (1000 * connections) / requestsPerSecond;
    for (let i = 0; i < connections; i++) {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      this.#agents.push(agent);
      // Staggered, so that the clients' slots spread over the interval.
      this.#loops.push(this.#run(agent, intervalMs, (i * intervalMs) / connections));
    }
  }

  /** Stops sending; resolves once every request sent has ended. */
  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#loops);
    for (const agent of this.#agents) agent.destroy();
  }

  async #run(agent: Agent, intervalMs: number, offsetMs: number): Promise<void> {
    let nextMs = Date.now() + offsetMs;
    while (!this.#stopping) {
      const waitMs = nextMs - Date.now();
      if (waitMs > 0) await sleep(waitMs);
      if (this.#stopping) return;
      await this.#one(agent, this.options.mix.next());
      nextMs = Math.max(nextMs + intervalMs, Date.now());
    }
  }

  async #one(agent: Agent, asked: SoakRequest): Promise<void> {
    const { recorder } = this.options;
    const sentMs = performance.now();
    let connection: ConnectionFacts | undefined;
    const outcome = await new Promise<Outcome>((resolve) => {
      const headers: Record<string, string> = { host: asked.host };
      if (asked.language !== '') headers['accept-language'] = asked.language;
      const request = httpRequest({ agent, host: this.#host, port: this.#port, path: asked.path, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error: NodeJS.ErrnoException) => resolve({ ok: false, what: error.code ?? error.message }));
        response.on('end', () => {
          if (response.statusCode !== 200) return resolve({ ok: false, what: `status ${response.statusCode}` });
          if (!Buffer.concat(chunks).equals(expectedBody(asked.kind, asked.path, asked.language))) return resolve({ ok: false, what: 'body differs' });
          resolve({ ok: true, cacheResult: String(response.headers['x-cache'] ?? 'none') });
        });
      });
      request.on('socket', (socket: Socket) => (connection = this.#connectionOf(socket)));
      request.setTimeout(this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS, () => request.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })));
      request.on('error', (error: NodeJS.ErrnoException) => resolve({ ok: false, what: error.code ?? error.message }));
      request.end();
    });
    const atMs = Date.now();
    if (outcome.ok) {
      if (connection !== undefined) connection.answered++;
      recorder.answered(atMs, outcome.cacheResult, performance.now() - sentMs);
    } else {
      const facts = connection ?? { id: 0, localPort: undefined, openedAtMs: atMs, answered: 0 };
      recorder.failed({ atMs, what: outcome.what, path: asked.path, connection: { ...facts } });
    }
  }

  #connectionOf(socket: Socket): ConnectionFacts {
    let facts = this.#connections.get(socket);
    if (facts === undefined) {
      const made: ConnectionFacts = { id: ++this.#connectionIds, localPort: socket.localPort, openedAtMs: Date.now(), answered: 0 };
      if (made.localPort === undefined) socket.once('connect', () => (made.localPort = socket.localPort));
      this.#connections.set(socket, made);
      facts = made;
    }
    return facts;
  }
}
