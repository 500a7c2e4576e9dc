// The typed admin API client (spec §9), for the CLI and for programs that drive svc.
export { type AdminClient, type AdminClientOptions, createAdminClient } from './admin-client.js';
export { AdminApiError, type LocalErrorCode } from './admin-api-error.js';
export { adminBaseUrl, DEFAULT_ADMIN_PORT, DEFAULT_ADMIN_SERVER, InvalidServerAddressError } from './server-address.js';
