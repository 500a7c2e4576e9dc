// Where spans go (spec §2.3 `tracing.endpoint`): `host:port` or `http(s)://host:port`, the scheme
// stripped and plain HTTP used, with OTLP/HTTP's trace path appended.

/** OTLP/HTTP's path for traces (OTLP specification, "OTLP/HTTP Request"). */
export const OTLP_TRACES_PATH = '/v1/traces';

/**
 * The URL spans are posted to, or undefined when the endpoint is empty (tracing off). The config
 * schema has already checked the shape; an `https://` scheme is dropped like `http://`, as the spec
 * says, so a collector behind TLS needs a local agent or sidecar that speaks plain HTTP.
 */
export function otlpTracesUrl(endpoint: string): string | undefined {
  const hostPort = endpoint.replace(/^https?:\/\//i, '').replace(/\/$/, '');
  return hostPort === '' ? undefined : `http://${hostPort}${OTLP_TRACES_PATH}`;
}
