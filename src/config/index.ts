// The configuration module's public surface: load and validate a file, the Config type, the JSON
// Schema, and the redacted view for the admin API.

export { type HostPort, splitHostPort } from './address.js';
export { type ConfigIssue, ConfigError, formatConfigIssue, ReloadRefusedError } from './config-error.js';
export { parseDurationMs } from './duration.js';
export { configJsonSchema } from './json-schema.js';
export { loadConfigFile, parseConfig, parseConfigText } from './load.js';
export { REDACTED, redactConfig } from './redact.js';
export { type Config, CDN_API_TOKEN_PATTERN, CDN_DEFAULT_API_BASE_URL, CDN_DEFAULT_TIMEOUT_MS, configSchema } from './schema.js';
