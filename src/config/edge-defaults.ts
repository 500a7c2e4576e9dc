// Defaults of the edge keys that are lists (`routes[].methods`, `routes[].strip_request_headers`)
// and the patterns their entries must match. Kept apart from schema.ts so the data plane reads the
// same lists the configuration documents.

/** RFC 9110 §9.1 method tokens as svc accepts them: upper-case letters, digits, `-` and `_`. */
export const METHOD_PATTERN = /^[A-Z][A-Z0-9_-]{0,31}$/;

/** A field name (RFC 9110 §5.1 token), written lower-case. */
export const FIELD_NAME_PATTERN = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;

/** What a web site and its APIs use; PURGE, BAN, TRACE, CONNECT and WebDAV methods are not forwarded. */
export const DEFAULT_FORWARDED_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * Fields that make an origin act on another method, URL, host or scheme than the one svc keyed
 * (frameworks honour them), so a client could store the answer to one request under another's key.
 */
export const DEFAULT_STRIPPED_REQUEST_FIELDS: readonly string[] = [
  'x-http-method-override',
  'x-http-method',
  'x-method-override',
  'x-original-url',
  'x-rewrite-url',
  'x-original-host',
  'x-host',
  'x-forwarded-server',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-forwarded-scheme',
  'x-forwarded-ssl',
  'x-scheme',
  'front-end-https',
];
