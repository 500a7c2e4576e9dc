// What every admin-API command of the CLI shares: the `--server`, `--token` and `--output` flags,
// turning them into a client, printing an answer, and turning a failed call into one stderr line.
import type { ArgsDef } from 'citty';
import { AdminApiError } from '../client/admin-api-error.js';
import { createAdminClient, type AdminClient } from '../client/admin-client.js';
import { DEFAULT_ADMIN_SERVER, InvalidServerAddressError } from '../client/server-address.js';
import { CliError } from './cli-error.js';

export const OUTPUT_FORMATS = ['text', 'json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export const adminClientArgs = {
  server: { type: 'string', description: 'admin API address, host:port or http(s) URL', default: DEFAULT_ADMIN_SERVER, valueHint: 'host:port' },
  token: { type: 'string', description: 'admin bearer token (default: $SVC_ADMIN_TOKEN)', valueHint: 'token' },
  output: { type: 'enum', options: [...OUTPUT_FORMATS], description: 'text for people, json (the response body) for scripts', default: 'text' },
} as const satisfies ArgsDef;

export interface AdminClientFlags {
  server?: string | undefined;
  token?: string | undefined;
}

/**
 * The client for these flags; the token falls back to SVC_ADMIN_TOKEN (spec §4.2). Commands that only
 * read unauthenticated endpoints (`svc cluster peers`) pass `tokenRequired: false`.
 */
export function clientFromFlags(flags: AdminClientFlags, env: NodeJS.ProcessEnv = process.env, tokenRequired = true): AdminClient {
  const token = flags.token !== undefined && flags.token !== '' ? flags.token : env.SVC_ADMIN_TOKEN;
  const missing = token === undefined || token === '';
  if (missing && tokenRequired) throw new CliError('no admin token: pass --token <token> or set SVC_ADMIN_TOKEN', 2);
  try {
    return createAdminClient({ server: flags.server ?? DEFAULT_ADMIN_SERVER, ...(missing ? {} : { token }) });
  } catch (error) {
    if (error instanceof InvalidServerAddressError) throw new CliError(error.message, 2);
    throw error;
  }
}

/** Runs one API call; a failure becomes `<operation> failed: <status> <code>: <message>`. */
export async function callApi<T>(operation: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AdminApiError) throw new CliError(`${operation} failed: ${error.message}`, 1);
    throw error;
  }
}

/** JSON output is the response body on one line; text output is the given sentence. */
export function printAnswer(output: string | undefined, body: unknown, text: string): void {
  console.log(output === 'json' ? JSON.stringify(body) : text);
}
