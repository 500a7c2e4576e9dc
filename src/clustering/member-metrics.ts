// The cluster's traffic and tiers as one node sees them, for the dashboard's cluster view: this node's
// own reading and each other member's `/v1/peer/metrics` answer, asked of all at once and bounded by
// the peer timeout. A member that is dead or gone is listed without being asked; one that does not
// answer, or answers something that is not a report, is listed with why, in words of our own (nothing
// a peer sends is passed on but the validated report).
import { TransportError, type MemberInfo, type MemberState, type RequestHandler, type RequestOptions } from '../../cluster/index.js';
import { checkPeerMetricsRequest, decodePeerMetrics, encodePeerMetrics, MalformedPeerMetricsError, PEER_METRICS_CHANNEL, type PeerMetrics } from './peer-metrics-wire.js';

/** What of the cluster member this needs. */
export interface MetricsMember {
  readonly localMember: MemberInfo;
  members(): MemberInfo[];
  handleRequest(channel: string, handler: RequestHandler): void;
  request(member: MemberInfo, channel: string, body: Uint8Array, options: RequestOptions): Promise<Uint8Array>;
}

export interface MemberMetrics {
  name: string;
  state: MemberState;
  /** The node that read the cluster. */
  self: boolean;
  /** The member's report; null when it was not asked or gave none. */
  metrics: PeerMetrics | null;
  /** Why there is no report; null when there is one. */
  unavailable: string | null;
}

const EMPTY = new Uint8Array(0);

/** Why a member gave no report, without repeating what it said (a peer's text is not ours to show). */
function unavailableBecause(error: unknown, timeoutMs: number): string {
  if (error instanceof MalformedPeerMetricsError) return 'answered something that is not a metrics report';
  if (!(error instanceof TransportError)) return 'could not be asked';
  if (error.code === 'timeout') return `no answer within ${timeoutMs} ms`;
  if (error.code === 'remote') return 'answered with an error (a version without /v1/peer/metrics, or another cluster secret)';
  if (error.code === 'closed' || error.code === 'aborted') return 'this node is stopping';
  return 'unreachable';
}

export class MemberMetricsReader {
  constructor(
    private readonly member: MetricsMember,
    /** This node's own report. */
    private readonly read: () => Promise<PeerMetrics>,
    private readonly timeoutMs: number,
  ) {}

  /** Serves `/v1/peer/metrics` for the other members. */
  start(): void {
    this.member.handleRequest(PEER_METRICS_CHANNEL, async (_from, body) => {
      checkPeerMetricsRequest(body);
      return encodePeerMetrics(await this.read());
    });
  }

  /** Every member this node knows, by name, each with its report or why it has none. */
  async readAll(): Promise<MemberMetrics[]> {
    const self = this.member.localMember.name;
    const members = this.member.members().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return Promise.all(
      members.map(async ({ name, state }, index): Promise<MemberMetrics> => {
        const row = { name, state, self: name === self };
        if (name === self) return { ...row, metrics: await this.read(), unavailable: null };
        if (state === 'dead' || state === 'left') return { ...row, metrics: null, unavailable: `not asked: ${state}` };
        try {
          const answer = await this.member.request(members[index]!, PEER_METRICS_CHANNEL, EMPTY, { timeoutMs: this.timeoutMs });
          const metrics = decodePeerMetrics(answer);
          if (metrics.node !== name) return { ...row, metrics: null, unavailable: 'answered as another node' };
          return { ...row, metrics, unavailable: null };
        } catch (error) {
          return { ...row, metrics: null, unavailable: unavailableBecause(error, this.timeoutMs) };
        }
      }),
    );
  }
}
