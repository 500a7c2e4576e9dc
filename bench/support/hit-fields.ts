// The header fields of svc's HIT, for the bare ceiling to send: issue 2 compares svc with a bare
// Node server answering the same bytes, and svc's answer carries more than the origin's (the
// origin's Date, Via, Age, X-Cache). Read off a live answer rather than written down here, so the
// ceiling follows whatever svc sends.
import { request } from 'undici';

/** Fields each connection's own framing adds; Node adds them to the ceiling's answers too. */
const CONNECTION_FIELDS = new Set(['connection', 'keep-alive', 'transfer-encoding']);

/** The fields of a HIT at `url` (asked twice: the first may be the miss that fills the cache). */
export async function hitFields(url: string): Promise<Record<string, string | string[]>> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const answer = await request(url);
    await answer.body.dump();
    if (answer.headers['x-cache'] !== 'HIT') continue;
    const fields: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (!CONNECTION_FIELDS.has(name) && value !== undefined) fields[name] = value;
    }
    return fields;
  }
  throw new Error(`${url} did not answer a HIT when asked twice`);
}
