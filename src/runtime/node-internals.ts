// The one switch over svc's uses of Node's internals: on the hit path, the outgoing-header slot
// (outgoing-header-slot.ts) and the pinned nextTick object shape (tick-object-shape.ts); in a
// zero-downtime upgrade, the listening sockets' descriptors read from their servers' handles
// (listeners.ts `listeningFd`) to be handed to the successor. With `SVC_NODE_INTERNALS=off` in the
// environment none is used: every hit takes the plain path Node documents (`writeHead(status,
// fields)`, no object kept alive), and an upgrade's successor opens sockets of its own beside the
// predecessor's (SO_REUSEPORT, which the node's listeners then all have; upgrade-successor.ts).
//
// Why a switch: each reaches past Node's public API, guarded by a probe or a test, and a Node
// release could change what they rely on in a way the probe does not see. The switch lets an
// operator rule them out without a new build, and lets the test suite run the data plane's tests on
// both paths (test/run.ts). It is an environment variable, not a configuration key, because the slot
// is found once when its module loads, before any configuration is read, and a reload could not
// change it.
import type { ConfigIssue } from '../config/index.js';

/** The environment variable: `on` (or unset) uses the internals, `off` forces the plain path. */
export const NODE_INTERNALS_VARIABLE = 'SVC_NODE_INTERNALS';

const VALUES = ['on', 'off', ''] as const;

/** Whether svc may use Node's internals, as this environment says. */
export function nodeInternalsAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[NODE_INTERNALS_VARIABLE] !== 'off';
}

/** A value other than `on` or `off`, reported at startup like a configuration problem. */
export function nodeInternalsEnvIssue(env: NodeJS.ProcessEnv): ConfigIssue | undefined {
  const value = env[NODE_INTERNALS_VARIABLE];
  if (value === undefined || (VALUES as readonly string[]).includes(value)) return undefined;
  return { path: NODE_INTERNALS_VARIABLE, message: `expected on or off, got ${JSON.stringify(value.slice(0, 40))}` };
}
