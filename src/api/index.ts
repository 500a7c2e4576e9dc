// The admin API's wire types, shared by the admin server, the typed client and the CLI.
export * from './absolute-url.js';
export * from './limits.js';
export * from './providers.js';
export * from './requests.js';
export * from './responses.js';
