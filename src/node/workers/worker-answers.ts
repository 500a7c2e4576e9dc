// A data-plane worker's answers to the main thread's calls (thread-messages.ts CALLS), set once the
// worker's node is built: calls sent before are held by the channel until then (main-channel.ts).
//
// `invalidate`: the main thread's engine has applied the operation to its journal and the warm tier
// and the hot tier is shared, so a worker applies it to what is its own: the lazy check (purge
// records, bans) and the store gate of its fills. Deletes from the shared hot tier find what no
// other thread deleted first; what it counts joins the engine's result. The warm tier's read
// snapshot is renewed first, so that reads see what the main thread already changed there.
import type { Invalidator } from '../../invalidation/invalidator.js';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/index.js';
import type { ListenerCertificate } from '../../tls/listener-certificates.js';
import type { MainChannel } from './main-channel.js';
import { answerMetricsCalls } from './worker-metrics.js';
import type { WorkerWarmTier } from './worker-warm-tier.js';

/** What a worker's node offers the main thread's calls. */
export interface AnsweringNode {
  readonly dataUrl: string;
  readonly invalidator: Invalidator;
  readonly registry: Registry;
  drain(): Promise<void>;
  reload(next: Config): Promise<unknown>;
  /** New certificates for the data plane's new connections. */
  setCertificates(certificates: readonly ListenerCertificate[]): void;
  /** Sends the hits it has to report now (background refresh's reports). */
  report(): void;
  listeningFds(): number[];
  stopAccepting(timeoutMs: number): Promise<boolean>;
}

export function answerMainCalls(channel: MainChannel, node: AnsweringNode, warm: WorkerWarmTier | undefined): void {
  answerMetricsCalls(channel, node.registry);
  channel.handle('describe', () => node.dataUrl);
  channel.handle('drain', async () => {
    await node.drain();
    return null;
  });
  channel.handle('reload', async (next) => {
    await node.reload(next);
    return null;
  });
  channel.handle('certificates', (certificates) => {
    node.setCertificates(certificates);
    return null;
  });
  channel.handle('report', () => {
    node.report();
    return null;
  });
  channel.handle('barrier', () => null);
  channel.handle('sockets', () => node.listeningFds());
  channel.handle('stopAccepting', (timeoutMs) => node.stopAccepting(timeoutMs));
  const local = node.invalidator;
  channel.handle('invalidate', async (invalidation) => {
    warm?.renewSnapshot();
    switch (invalidation.type) {
      case 'purge':
        return (await local.purge(invalidation.url, invalidation.origin)).count;
      case 'purge_batch':
        return (await local.purgeBatch(invalidation.urls, invalidation.origin)).count;
      case 'ban':
        return (await local.ban(invalidation.spec, invalidation.origin)).count;
      case 'refresh':
        return (await local.refresh(invalidation.url, invalidation.origin)).count;
    }
  });
}
