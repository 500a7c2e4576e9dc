// One access-log record per request (spec §2.4), sampled as spec §6.6 says: `200 OK` responses
// 1 in 100, every other status always. The sampling is a counter, not a coin, so a test (and an
// operator) can tell exactly which 200s are written: the 1st, the 101st, the 201st…

import type { Logger } from './logger.js';

export interface AccessRecord {
  method: string;
  host: string;
  path: string;
  proto: string;
  status: number;
  bytes_out: number;
  dur_ms: number;
  cache_status: string;
  route: string;
  remote: string;
}

/** Spec §6.6: one in this many `200` responses is logged. */
export const OK_SAMPLE_EVERY = 100;

export interface AccessLog {
  /** Whether a response of this status is to be logged; counts the 200s it passes over. Ask once per
   * response, before building its record, so unsampled responses cost no record at all. */
  sampled(status: number): boolean;
  record(entry: AccessRecord): void;
}

export function createAccessLog(logger: Logger): AccessLog {
  let okSeen = 0;
  return {
    sampled(status) {
      return status !== 200 || okSeen++ % OK_SAMPLE_EVERY === 0;
    },
    record(entry) {
      logger.info(entry, 'access');
    },
  };
}
