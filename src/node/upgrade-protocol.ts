// What an upgrading `svc serve` (the predecessor) and the process it starts (the successor) say to
// each other (docs/operations.md "Upgrading without downtime"). The predecessor starts the successor
// with the listening sockets as inherited descriptors (none with SVC_NODE_INTERNALS=off: their
// addresses only, which the successor opens again beside them with SO_REUSEPORT), described in one
// environment variable, and an IPC channel for three messages: the successor asks for the node's directory (`release`), the
// predecessor answers once it let go of it (`released`), and the successor says it serves
// (`serving`), after which the predecessor stops taking connections and drains.
import * as v from 'valibot';

/** The environment variable that makes `svc serve` a successor: the sockets handed over, as JSON. */
export const UPGRADE_ENV = 'SVC_UPGRADE';

/** The first inherited descriptor (0-2 are stdio, 3 the IPC channel). */
export const FIRST_HANDED_FD = 4;

const Listener = v.object({
  /** The address as configured (`listen`, `admin.listen`): a successor configured otherwise opens its own. */
  address: v.string(),
  /** The URL the predecessor bound (its port when the configuration says 0). */
  url: v.string(),
  /**
   * The inherited descriptors; none when the predecessor reads no descriptor (SVC_NODE_INTERNALS=off):
   * the successor then opens a socket of its own on `url`'s address, beside the predecessor's.
   */
  fds: v.array(v.pipe(v.number(), v.integer(), v.minValue(FIRST_HANDED_FD))),
});

const HandedOverShape = v.object({
  /** The predecessor's pid, for the logs. */
  from: v.pipe(v.number(), v.integer()),
  admin: Listener,
  data: Listener,
});
export type HandedOver = v.InferOutput<typeof HandedOverShape>;
export type HandedListener = v.InferOutput<typeof Listener>;

/** The variable's value read back; throws a message that says what does not fit. */
export function parseHandedOver(text: string): HandedOver {
  const parsed = v.safeParse(HandedOverShape, JSON.parse(text));
  if (!parsed.success) throw new Error(`${UPGRADE_ENV} does not describe handed-over sockets: ${v.summarize(parsed.issues)}`);
  return parsed.output;
}

export type SuccessorMessage = { kind: 'release' } | { kind: 'serving' };
export type PredecessorMessage = { kind: 'released' };

const kindOf = (message: unknown): unknown => (typeof message === 'object' && message !== null ? (message as { kind?: unknown }).kind : undefined);

export function isSuccessorMessage(message: unknown): message is SuccessorMessage {
  const kind = kindOf(message);
  return kind === 'release' || kind === 'serving';
}

export function isPredecessorMessage(message: unknown): message is PredecessorMessage {
  return kindOf(message) === 'released';
}
