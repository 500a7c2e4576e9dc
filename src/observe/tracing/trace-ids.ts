// Trace and span ids for svc's spans: the SDK's random ones, except that a request's root span is
// given the trace id svc chose when it decided to sample it (see request-sampler.ts). Deciding before
// any span exists is what keeps an unsampled request free of span objects (otel-request-trace.ts).
import { RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace';

export class RequestTraceIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private next: string | undefined;

  /** The next root span the SDK starts gets this trace id (the SDK starts it synchronously after). */
  useNext(traceId: string): void {
    this.next = traceId;
  }

  generateTraceId(): string {
    const id = this.next ?? this.random.generateTraceId();
    this.next = undefined;
    return id;
  }

  generateSpanId(): string {
    return this.random.generateSpanId();
  }
}
