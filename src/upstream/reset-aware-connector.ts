// undici's connector with one change: a connection reset while a close-delimited body is being read
// fails that body. undici takes such a reset for the end of the body (client-h1.js onHttpSocketError,
// written for a macOS quirk), so a body cut short by an origin that died would look complete and be
// stored. The reset's code is renamed before undici sees it, so undici treats it as the failure it is;
// every other error reaches undici unchanged. docs/http-caching.md ("Truncated and close-delimited
// bodies") states the rule this enforces.
import type { Socket } from 'node:net';
import { buildConnector } from 'undici';

/** The code a connection reset carries once renamed: still a broken connection for svc's error classes. */
const RESET_CODE = 'ECONNRESET_UPSTREAM';

function renameReset(error: NodeJS.ErrnoException): void {
  if (error.code === 'ECONNRESET') error.code = RESET_CODE;
}

export function resetAwareConnector(options: buildConnector.BuildOptions): buildConnector.connector {
  const connect = buildConnector(options);
  return (connectOptions, callback) => {
    connect(connectOptions, (error, socket) => {
      // A failed connection comes with no socket (undefined, whatever the types say).
      if (socket) (socket as Socket).prependListener('error', renameReset);
      (callback as (error: Error | null, socket: Socket | null) => void)(error, (socket as Socket | null | undefined) ?? null);
    });
  };
}
