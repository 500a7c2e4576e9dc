// Logging in to the dashboard as a script does: the login form posted as plain HTTP, the session
// cookie taken from Set-Cookie, and the CSRF token read from a dashboard page.
import { fetchRaw, header } from '../../support/http.js';

export interface DashboardLogin {
  /** `svc_session=<value>`, for a Cookie header. */
  cookie: string;
  /** The whole Set-Cookie line. */
  setCookie: string;
  csrf: string;
  /** Cookie and CSRF header of an API call the dashboard makes, with a same-origin Origin. */
  apiHeaders(adminUrl: string): Record<string, string>;
}

export const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };

export async function logInOverHttp(adminUrl: string, token: string): Promise<DashboardLogin> {
  const answer = await fetchRaw(`${adminUrl}/dashboard/login`, { method: 'POST', headers: FORM_TYPE, body: new URLSearchParams({ token }).toString() });
  const setCookie = header(answer, 'set-cookie');
  if (answer.status !== 303 || setCookie === undefined) throw new Error(`login answered ${answer.status} without a cookie: ${answer.body.slice(0, 200)}`);
  const cookie = setCookie.split(';', 1)[0] as string;
  const page = await fetchRaw(`${adminUrl}/dashboard/`, { headers: { cookie } });
  const csrf = /<meta name="csrf-token" content="([^"]+)">/.exec(page.body)?.[1];
  if (csrf === undefined) throw new Error(`the dashboard page carries no CSRF token (status ${page.status})`);
  return {
    cookie,
    setCookie,
    csrf,
    apiHeaders: (url) => ({ cookie, 'x-csrf-token': csrf, origin: new URL(url).origin }),
  };
}
