// Which requests are traced (spec §2.3 `tracing.sampling_rate`). The decision is a function of the
// trace id (OpenTelemetry's TraceIdRatioBased), so every svc node with the same rate makes the same
// one for a trace: a peer fetch is traced on the owner exactly when it is on the node that asked.
//
// An incoming `traceparent` gives the request its trace id and parent, never its sampling decision:
// its sampled flag is ignored both ways and the rate applies. The data plane faces clients that
// may be hostile; honouring their flag would let any client make svc trace (and export) all its
// requests whatever the operator's rate. A caller that samples by trace id at the same rate (or a
// lower one) still sees its traces continued. Spans inside svc follow their parent.
//
// A request without a trace context is decided first, by a draw of weight `rate`, and given a
// trace id only when it needs one: one the ratio sampler decides the same way for. Most requests
// are hits that are not sampled and send nothing on; they never make an id (a random id and its
// check cost about 8% of a hit's instructions, measured with bench/hit-instructions.ts).
import { ROOT_CONTEXT, SamplingDecision, type Context } from '@opentelemetry/api';
import { ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace';

const WORD = 0x1_0000_0000;

export class RequestSampler {
  /** For the tracer provider: svc's spans follow their parent, a root goes by trace id. */
  readonly sdkSampler: Sampler;
  private readonly byTraceId: TraceIdRatioBasedSampler;
  /**
   * TraceIdRatioBased samples an id when the XOR of its four 32-bit words is below this bound (its
   * `_upperBound`, the same formula); test/observe/tracing-parts.test.ts holds the two together.
   */
  private readonly bound: number;

  constructor(private readonly rate: number) {
    this.byTraceId = new TraceIdRatioBasedSampler(rate);
    this.sdkSampler = new ParentBasedSampler({ root: this.byTraceId, remoteParentSampled: this.byTraceId, remoteParentNotSampled: this.byTraceId });
    this.bound = rate >= 1 ? WORD : Math.floor(Math.max(0, rate) * 0xffffffff);
  }

  /** Whether a request that came with the trace id `traceId` is traced. */
  samples(traceId: string, context: Context = ROOT_CONTEXT): boolean {
    return this.byTraceId.shouldSample(context, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;
  }

  /** Whether a request that came without a trace context is traced. */
  samplesNewTrace(): boolean {
    return this.bound === WORD || Math.random() * WORD < this.bound;
  }

  /** A random trace id that `samples()` decides `sampled` for (the rate must allow that decision). */
  newTraceId(sampled: boolean): string {
    const words = [randomWord(), randomWord(), randomWord()];
    const target = sampled ? Math.floor(Math.random() * this.bound) : this.bound + Math.floor(Math.random() * (WORD - this.bound));
    // The fourth word makes the XOR of all four come out at `target`, which is uniform in its range.
    words.push((target ^ words[0]! ^ words[1]! ^ words[2]!) >>> 0);
    if (!words.some((word) => word !== 0)) words[0] = words[3] = 1; // all zeros is not a valid trace id; the XOR stays
    return words.map((word) => word.toString(16).padStart(8, '0')).join('');
  }
}

function randomWord(): number {
  return Math.floor(Math.random() * WORD);
}
