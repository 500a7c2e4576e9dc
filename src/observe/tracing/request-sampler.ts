// Which requests are traced (spec §2.3 `tracing.sampling_rate`). The decision is a function of the
// trace id (TraceIdRatioBased), so every svc node with the same rate makes the same one for a trace:
// a peer fetch is traced on the owner exactly when it is traced on the node that asked.
//
// An incoming `traceparent` gives the request its trace id and parent, never its sampling decision:
// its sampled flag is ignored both ways and the rate applies. The data plane faces clients that
// may be hostile; honouring their flag would let any client make svc trace (and export) all its
// requests whatever the operator's rate. A caller that samples by trace id at the same rate (or a
// lower one) still sees its traces continued. Spans inside svc follow their parent.
import { ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace';

export function requestSampler(samplingRate: number): Sampler {
  const byTraceId = new TraceIdRatioBasedSampler(samplingRate);
  return new ParentBasedSampler({ root: byTraceId, remoteParentSampled: byTraceId, remoteParentNotSampled: byTraceId });
}
