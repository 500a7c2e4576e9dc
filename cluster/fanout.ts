// Fan-out: one request to many members at once, each with its own timeout, and every member's outcome
// reported rather than the first failure thrown, so a consumer can fall back (to gossip) per member.
import type { MemberInfo } from './membership/member-record.js';
import type { Transport } from './transport.js';
import { TransportError } from './transport.js';

/**
 * - ok: the member's handler answered;
 * - timeout: no answer within the per-member timeout;
 * - refused: the request reached no handler (nothing listens there, or no route to it);
 * - error: anything else (the member's handler failed, the caller aborted, the transport is closed).
 */
export type FanOutOutcome = 'ok' | 'timeout' | 'refused' | 'error';

export interface FanOutResult {
  readonly member: MemberInfo;
  readonly outcome: FanOutOutcome;
  readonly body?: Uint8Array;
  readonly error?: Error;
}

export interface FanOutOptions {
  /** Upper bound per member; members are asked concurrently, so this bounds the whole call too. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/** How a failed request counts in a fan-out. */
export function fanOutOutcomeOf(error: unknown): Exclude<FanOutOutcome, 'ok'> {
  if (!(error instanceof TransportError)) return 'error';
  switch (error.code) {
    case 'timeout':
      return 'timeout';
    case 'refused':
    case 'unreachable':
      return 'refused';
    default:
      return 'error';
  }
}

/** Sends `body` on `channel` to every member in `members` concurrently; resolves with one result each, in order. */
export function fanOut(
  transport: Transport,
  members: readonly MemberInfo[],
  channel: string,
  body: Uint8Array,
  options: FanOutOptions,
): Promise<FanOutResult[]> {
  return Promise.all(
    members.map(async (member): Promise<FanOutResult> => {
      try {
        const response = await transport.request(member.address, channel, body, {
          timeoutMs: options.timeoutMs,
          signal: options.signal,
        });
        return { member, outcome: 'ok', body: response };
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        return { member, outcome: fanOutOutcomeOf(error), error: failure };
      }
    }),
  );
}
