// A network a test can partition for real: one namespace per node and a hub namespace that plays the
// switches. Each node has two links to the hub, veth pairs on two networks:
// - the cluster network (10.77.0.N/24, node side `cluster0`), over which the nodes talk to each other,
//   bridged in the hub by `cluster`. Cutting it moves the minority's hub-side ends onto a bridge of
//   their own, `cut`, as if their cables were moved to another switch: the two sides no longer
//   exchange a packet, each side still talks within itself. Healing moves them back.
// - the edge network (10.78.0.N/24, node side `edge0`), bridged by `edge`, where the hub holds
//   10.78.0.254: clients and the origin, which still reach every node while the cluster is cut, as
//   they would when a partition splits the nodes' own network (a minority node is still asked for
//   content, and must answer it without its cache).
// Namespace names carry the test process's pid, so parallel runs do not collide.
import { ip } from './netns.js';

export interface NetworkNode {
  name: string;
  namespace: string;
  /** Where the node talks to the other nodes. */
  clusterAddress: string;
  /** Where clients and the hub reach the node. */
  edgeAddress: string;
}

export interface PartitionNetwork {
  /** The hub's namespace: processes run there reach every node's edge address. */
  hub: string;
  /** The hub's address on the edge network. */
  hubAddress: string;
  nodes: NetworkNode[];
  /** Cuts `minority` off the other nodes' cluster network (they keep each other, and the edge). */
  cut(minority: readonly string[]): Promise<void>;
  /** Puts every node back on one cluster network. */
  heal(): Promise<void>;
  /** Deletes every namespace, and with them their links; the processes in them must be gone first. */
  destroy(): Promise<void>;
}

const CLUSTER_SUBNET = '10.77.0';
const EDGE_SUBNET = '10.78.0';
const HUB_HOST = 254;

/** The hub-side end of a node's link on one network (at most 15 characters, unique in the hub). */
const hubEnd = (network: 'c' | 'e', node: string): string => `${network}-${node}`.slice(0, 15);

export async function createPartitionNetwork(names: readonly string[]): Promise<PartitionNetwork> {
  if (names.length >= HUB_HOST) throw new Error(`at most ${HUB_HOST - 1} nodes, not ${names.length}`);
  const prefix = `svc${process.pid}`;
  const hub = `${prefix}-hub`;
  const nodes = names.map((name, index) => ({
    name,
    namespace: `${prefix}-${name}`,
    clusterAddress: `${CLUSTER_SUBNET}.${index + 1}`,
    edgeAddress: `${EDGE_SUBNET}.${index + 1}`,
  }));
  const created: string[] = [];
  const destroy = async (): Promise<void> => {
    const failures: string[] = [];
    for (const namespace of created.splice(0).reverse()) await ip('netns', 'del', namespace).catch((error: Error) => failures.push(error.message));
    if (failures.length > 0) throw new Error(failures.join('\n'));
  };
  try {
    await ip('netns', 'add', hub);
    created.push(hub);
    await ip('-n', hub, 'link', 'set', 'lo', 'up');
    for (const bridge of ['edge', 'cluster', 'cut']) {
      await ip('-n', hub, 'link', 'add', bridge, 'type', 'bridge');
      await ip('-n', hub, 'link', 'set', bridge, 'up');
    }
    await ip('-n', hub, 'address', 'add', `${EDGE_SUBNET}.${HUB_HOST}/24`, 'dev', 'edge');
    for (const node of nodes) {
      await ip('netns', 'add', node.namespace);
      created.push(node.namespace);
      await ip('-n', node.namespace, 'link', 'set', 'lo', 'up');
      const links = [
        { end: hubEnd('c', node.name), bridge: 'cluster', device: 'cluster0', address: node.clusterAddress },
        { end: hubEnd('e', node.name), bridge: 'edge', device: 'edge0', address: node.edgeAddress },
      ];
      for (const link of links) {
        await ip('-n', hub, 'link', 'add', link.end, 'type', 'veth', 'peer', 'name', link.device, 'netns', node.namespace);
        await ip('-n', hub, 'link', 'set', link.end, 'master', link.bridge, 'up');
        await ip('-n', node.namespace, 'address', 'add', `${link.address}/24`, 'dev', link.device);
        await ip('-n', node.namespace, 'link', 'set', link.device, 'up');
      }
    }
  } catch (error) {
    await destroy().catch(() => undefined);
    throw error;
  }
  const attach = async (names: readonly string[], bridge: string): Promise<void> => {
    for (const name of names) await ip('-n', hub, 'link', 'set', hubEnd('c', name), 'master', bridge);
  };
  let cutOff: readonly string[] = [];
  return {
    hub,
    hubAddress: `${EDGE_SUBNET}.${HUB_HOST}`,
    nodes,
    async cut(minority) {
      const unknown = minority.filter((name) => !names.includes(name));
      if (unknown.length > 0) throw new Error(`no such nodes: ${unknown.join(', ')}`);
      await attach(minority, 'cut');
      cutOff = [...cutOff, ...minority];
    },
    async heal() {
      await attach(cutOff, 'cluster');
      cutOff = [];
    },
    destroy,
  };
}
