// Where the demo listens (`npm start`, `npm run demo-origin`), from the environment, with the
// defaults the README uses. Each value is checked, so a typo is one line rather than a stack trace.
import { LISTEN_ADDRESS_PATTERN } from '../../src/config/address.js';

export const DEMO_DEFAULTS = {
  SVC_LISTEN: '127.0.0.1:8080',
  SVC_ADMIN_LISTEN: '127.0.0.1:9000',
  DEMO_ORIGIN_PORT: '8081',
} as const;

export interface DemoAddresses {
  /** The svc data plane, `host:port`. */
  listen: string;
  /** The svc admin API, `host:port`. */
  adminListen: string;
  /** The demo origin's port on 127.0.0.1. */
  originPort: number;
}

/** The addresses, or the one line that says which variable is wrong. */
export function demoAddresses(env: NodeJS.ProcessEnv): DemoAddresses | string {
  const pick = (name: keyof typeof DEMO_DEFAULTS): string => (env[name] === undefined || env[name] === '' ? DEMO_DEFAULTS[name] : env[name]);
  const listen = pick('SVC_LISTEN');
  const adminListen = pick('SVC_ADMIN_LISTEN');
  const port = pick('DEMO_ORIGIN_PORT');
  for (const [name, value] of [['SVC_LISTEN', listen], ['SVC_ADMIN_LISTEN', adminListen]] as const) {
    if (!LISTEN_ADDRESS_PATTERN.test(value)) return `${name} must be host:port (like ${DEMO_DEFAULTS[name]}), got ${JSON.stringify(value)}`;
  }
  const originPort = Number(port);
  if (!/^\d{1,5}$/.test(port) || originPort > 65_535) return `DEMO_ORIGIN_PORT must be a port number (like ${DEMO_DEFAULTS.DEMO_ORIGIN_PORT}), got ${JSON.stringify(port)}`;
  return { listen, adminListen, originPort };
}

/** Why the demo origin could not open its port, with what to do about it. */
export function originListenFailure(port: number, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code === 'EADDRINUSE' ? 'address already in use (EADDRINUSE)' : (error as Error).message;
  return `the demo origin cannot open 127.0.0.1:${port}: ${reason}; set DEMO_ORIGIN_PORT to another port`;
}
