// A data-plane worker of `svc serve` (forked by the primary, data-plane-workers.ts): a node without
// an admin listener, a cluster member or CDN propagation, with its share of the hot tier and a view
// of the primary's warm tier, serving the data-plane port it shares with the other workers. It logs JSON lines on its standard output, which
// the primary relays whole, in the primary's log format.
// Usage (by the primary only): node worker-main.js <configuration file>
import { loadConfigFile } from '../../config/index.js';
import { createLogger, LogOutput } from '../../observe/logger.js';
import { startNode } from '../svc-node.js';
import { WarmReader } from '../../store/warm/warm-reader.js';
import { PrimaryChannel } from './primary-channel.js';
import { WorkerWarmTier } from './worker-warm-tier.js';
import { RelayedClusterMember } from './relayed-cluster-member.js';
import { answerPrimaryCalls } from './worker-answers.js';
import { WORKER_SLOT_VARIABLE } from './worker-supervisor.js';

/** The primary's cluster member as this worker sees it, from the primary's first view on. */
async function relayedMember(name: string, channel: PrimaryChannel): Promise<{ member: RelayedClusterMember; hopToken: string }> {
  const view = await channel.clusterView;
  const member = new RelayedClusterMember(name, (peer, peerChannel, body, timeoutMs) => channel.askPeer(peer, peerChannel, body, timeoutMs));
  channel.onClusterView((next) => member.update(next));
  return { member, hopToken: view.hopToken };
}

// First: a purge the primary sends while this worker starts is held, not lost.
const channel = PrimaryChannel.open();
const output = new LogOutput('json');
// Nobody reads this output once the primary is gone, and the exit's last flush of it would retry the
// broken pipe forever. Node exits a cluster worker at once when its primary is gone (before any
// listener of ours runs); a worker that stops by itself checks as it exits.
process.prependListener('disconnect', () => output.abandon());
process.prependListener('exit', () => {
  if (!process.connected) output.abandon();
});
const logger = createLogger({ destination: output });
const configFile = process.argv[2]!;
try {
  const config = await loadConfigFile(configFile);
  // The warm tier is the primary's, which opened it before forking this worker: read here, written there.
  const warm = config.warm ? new WorkerWarmTier(WarmReader.open(config.warm.path), (write) => channel.sendWarm(write)) : undefined;
  // Strong mode: the ring and the peers are reached through the primary's cluster member.
  const peers = config.cluster?.mode === 'strong' ? await relayedMember(config.cluster.node_name, channel) : undefined;
  const node = await startNode({
    config,
    logger,
    configFile,
    role: 'worker',
    sharedWarm: warm && { tier: warm, joined: channel.warmJoined },
    clusterCaughtUp: () => channel.caughtUp,
    peers,
  });
  answerPrimaryCalls(channel, node, warm);
  channel.onStop(async () => {
    await node.stop();
    await warm?.close();
    // The last access lines are still in the log's buffer: written before the worker exits.
    await new Promise<void>((resolve) => output.flush(() => resolve()));
  });
  channel.reportReady();
} catch (error) {
  logger.fatal({ err: error, worker: process.env[WORKER_SLOT_VARIABLE] }, 'data-plane worker could not start');
  channel.reportFailed(error instanceof Error ? error.message : String(error));
  // The primary sees the exit: a first start fails as a whole, a restart is tried again later.
  output.flush(() => process.exit(1));
}
