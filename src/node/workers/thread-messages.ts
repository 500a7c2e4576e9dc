// What the main thread and its data-plane worker threads say to each other, as one table: each
// message kind with its fields, and each call (main → every worker, answered by each) with its
// payload and its result. Every message is checked against this table when it arrives (valibot): a
// message that does not fit is dropped and logged, never acted on, so that a bug on one side cannot
// become wrong state on the other. Errors travel as `{ code, message }`.
import type { Registry } from 'prom-client';
import type { Config } from '../../config/index.js';
import * as v from 'valibot';

/** One metric's figures as prom-client's getMetricsAsJSON gives them. */
export type MetricFigures = Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number];

const ErrorShape = v.object({ code: v.string(), message: v.string() });
export type ThreadError = v.InferOutput<typeof ErrorShape>;

const Origin = v.optional(v.object({ id: v.string(), atMs: v.number() }));
const BanSpecShape = v.object({
  host_regex: v.optional(v.string()),
  path_regex: v.optional(v.string()),
  surrogate_key: v.optional(v.string()),
});
const Invalidation = v.variant('type', [
  v.object({ type: v.literal('purge'), url: v.string(), origin: Origin }),
  v.object({ type: v.literal('purge_batch'), urls: v.array(v.string()), origin: Origin }),
  v.object({ type: v.literal('ban'), spec: BanSpecShape, origin: Origin }),
  v.object({ type: v.literal('refresh'), url: v.string(), origin: Origin }),
]);

/**
 * The calls: main → every worker, each answers with the result (or an error). `describe` gives the
 * worker's data-plane URL; `drain` answers once its in-flight requests are done; `reload` once it
 * applied the configuration the main thread reloaded; `certificates` once it serves them; `invalidate` with the entries it counted; `metrics` with its
 * registry's figures (prom-client's JSON, summed by the main thread).
 */
export const CALLS = {
  describe: { payload: v.null(), result: v.string() },
  drain: { payload: v.null(), result: v.null() },
  reload: { payload: v.custom<Config>((data) => typeof data === 'object' && data !== null, 'a configuration expected'), result: v.null() },
  /** The data plane's certificates a reload took (PEM text and SNI names), for new connections. */
  certificates: { payload: v.array(v.object({ cert: v.string(), key: v.string(), names: v.array(v.string()) })), result: v.null() },
  invalidate: { payload: Invalidation, result: v.number() },
  /** Sends the hits on refresh-enabled routes served since the last report now, before answering. */
  report: { payload: v.null(), result: v.null() },
  /**
   * Answers at once. Messages keep their order both ways, so the answer says that what the worker
   * sent before answering (its warm-tier writes) has reached the main thread.
   */
  barrier: { payload: v.null(), result: v.null() },
  /** The descriptors of the worker's data-plane listening sockets, which an upgrade hands over. */
  sockets: { payload: v.null(), result: v.array(v.number()) },
  /**
   * After an upgrade handed the sockets over: the worker stops taking connections and answers once
   * its connections ended (true) or after the payload's milliseconds (false).
   */
  stopAccepting: { payload: v.number(), result: v.boolean() },
  metrics: { payload: v.null(), result: v.array(v.custom<MetricFigures>((data) => typeof (data as { name?: unknown } | null)?.name === 'string', 'a metric expected')) },
} as const;

export type CallName = keyof typeof CALLS;
export type CallPayload<K extends CallName> = v.InferOutput<(typeof CALLS)[K]['payload']>;
export type CallResult<K extends CallName> = v.InferOutput<(typeof CALLS)[K]['result']>;

const MemberShape = v.object({
  name: v.string(),
  address: v.string(),
  state: v.picklist(['alive', 'suspect', 'dead', 'left']),
  incarnation: v.number(),
  metadata: v.record(v.string(), v.string()),
});

const ClusterViewShape = v.object({
  /** The names that own keys on the ring, as the main thread's member has them. */
  owners: v.array(v.string()),
  /** Every member the node knows, with its state. */
  members: v.array(MemberShape),
  /** The node's peer-fetch hop token: what its owner side forwards, a worker answers itself. */
  hopToken: v.string(),
});
export type ClusterView = v.InferOutput<typeof ClusterViewShape>;

const Bytes = v.custom<Uint8Array>((data) => data instanceof Uint8Array, 'bytes expected');

/** A change to the warm tier the main thread owns and writes (worker-warm-tier.ts). */
const WarmWriteShape = v.variant('op', [
  v.object({ kind: v.literal('warm'), op: v.literal('put'), record: Bytes }),
  v.object({ kind: v.literal('warm'), op: v.literal('delete'), key: v.string(), variantKey: v.optional(v.string()) }),
  v.object({ kind: v.literal('warm'), op: v.literal('use'), variants: v.array(v.tuple([v.string(), v.string()])) }),
  v.object({ kind: v.literal('warm'), op: v.literal('verify'), key: v.string() }),
]);
export type WarmWrite = v.InferOutput<typeof WarmWriteShape>;

const RefetchShape = v.object({ path: v.string(), host: v.string(), varyFields: v.array(v.string()) });

/** Hits on refresh-enabled routes a worker served since its last report (background refresh lives in the main thread). */
const ServedEntryShape = v.object({
  key: v.string(),
  variantKey: v.string(),
  correctedInitialAgeMs: v.number(),
  responseTimeMs: v.number(),
  freshnessLifetimeMs: v.number(),
  staleWhileRevalidateMs: v.number(),
  staleIfErrorMs: v.number(),
  mustRevalidate: v.boolean(),
  noCache: v.boolean(),
  forcedStale: v.boolean(),
});
const ServedShape = v.object({
  kind: v.literal('served'),
  hits: v.array(v.object({ route: v.string(), entry: ServedEntryShape, request: RefetchShape, count: v.number() })),
});
export type ServedReport = v.InferOutput<typeof ServedShape>;

/** Main → worker. */
const DownShape = v.variant('kind', [
  v.object({ kind: v.literal('call'), id: v.number(), call: v.picklist(Object.keys(CALLS) as CallName[]), payload: v.unknown() }),
  v.object({ kind: v.literal('cluster-view'), view: ClusterViewShape }),
  v.object({ kind: v.literal('peer-reply'), id: v.number(), body: v.optional(Bytes), error: v.optional(ErrorShape) }),
  v.object({ kind: v.literal('stop') }),
]);
export type DownMessage = v.InferOutput<typeof DownShape>;

/** Worker → main. */
const UpShape = v.variant('kind', [
  v.object({ kind: v.literal('reply'), id: v.number(), result: v.optional(v.unknown()), error: v.optional(ErrorShape) }),
  v.object({ kind: v.literal('ready') }),
  v.object({ kind: v.literal('failed'), error: ErrorShape }),
  WarmWriteShape,
  v.object({ kind: v.literal('peer-request'), id: v.number(), member: v.string(), channel: v.string(), body: Bytes, timeoutMs: v.number() }),
  ServedShape,
]);
export type UpMessage = v.InferOutput<typeof UpShape>;

/** A message as it arrived, checked: the message, or why it does not fit the table. */
export type Checked<M> = { ok: true; message: M } | { ok: false; issue: string };

function check<M>(schema: v.GenericSchema<unknown, M>, data: unknown): Checked<M> {
  const result = v.safeParse(schema, data);
  if (result.success) return { ok: true, message: result.output };
  const issue = result.issues[0];
  return { ok: false, issue: `${v.getDotPath(issue) ?? 'message'}: ${issue.message}` };
}

export const checkDown = (data: unknown): Checked<DownMessage> => check(DownShape, data);
export const checkUp = (data: unknown): Checked<UpMessage> => check(UpShape, data);

/** A call's payload or result, checked against the table. */
export function checkCall<K extends CallName>(call: K, part: 'payload' | 'result', data: unknown): Checked<CallPayload<K> | CallResult<K>> {
  return check(CALLS[call][part] as v.GenericSchema<unknown, CallPayload<K> | CallResult<K>>, data);
}

/** An error as it travels between threads: its `code` when it has one, `internal` otherwise. */
export function threadError(error: unknown): ThreadError {
  const code = (error as { code?: unknown } | null)?.code;
  return { code: typeof code === 'string' ? code : 'internal', message: error instanceof Error ? error.message : String(error) };
}
