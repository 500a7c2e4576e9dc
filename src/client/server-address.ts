// The `--server` value of the CLI and the `server` option of the client: `host:port`, a bare host
// (port 9000, the admin default of spec §8) or an http(s) URL.

/** The admin port of spec §8, and the CLI's default server (spec §4.2). */
export const DEFAULT_ADMIN_PORT = 9000;
export const DEFAULT_ADMIN_SERVER = `127.0.0.1:${DEFAULT_ADMIN_PORT}`;

export class InvalidServerAddressError extends Error {
  override readonly name = 'InvalidServerAddressError';
  readonly code = 'invalid_server_address';
  constructor(value: string) {
    super(`--server must be host:port or an http(s):// URL, got ${JSON.stringify(value)}`);
  }
}

/** The base URL, e.g. `http://127.0.0.1:9000`, without a trailing slash. */
export function adminBaseUrl(server: string | URL): string {
  const text = String(server).trim();
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
  let url: URL;
  try {
    url = new URL(hasScheme ? text : `http://${text}`);
  } catch {
    throw new InvalidServerAddressError(text);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '' || url.search !== '' || url.hash !== '') {
    throw new InvalidServerAddressError(text);
  }
  // A bare host gets the admin port; `new URL` alone would read `host:80` as "no port" too.
  if (!hasScheme && !/:\d+$/.test(text)) url.port = String(DEFAULT_ADMIN_PORT);
  return url.href.replace(/\/+$/, '');
}
