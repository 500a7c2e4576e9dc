// The HTTP shape of the reliable path, shared by client and server: channel `c` is POSTed to
// `/v1/peer/<c>` (spec §4.1: `/v1/peer/fetch`, `/v1/peer/purge`, ...), each `/`-separated segment
// percent-encoded, and the caller's transport address travels in a header because the TCP source
// port of a request is not the caller's listening port.

export const PEER_PATH_PREFIX = '/v1/peer/';

/** The caller's transport address (`host:port`). */
export const FROM_HEADER = 'svc-peer-from';

export function channelPath(channel: string): string {
  return PEER_PATH_PREFIX + channel.split('/').map(encodeURIComponent).join('/');
}

/** The channel a request path names, or null when the path is not under `/v1/peer/` or is malformed. */
export function channelOfPath(url: string): string | null {
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  if (!path.startsWith(PEER_PATH_PREFIX) || path.length === PEER_PATH_PREFIX.length) return null;
  try {
    return path.slice(PEER_PATH_PREFIX.length).split('/').map(decodeURIComponent).join('/');
  } catch {
    return null;
  }
}
