// Tables of request/response exchanges run against a real svc node and a real origin: each step moves
// the node's clock, sends one request, and checks what came back and what the origin saw.
import assert from 'node:assert/strict';
import { header, type Answer, type RequestFields } from '../support/http.js';
import type { CachingFixture, PathReply } from '../support/caching-fixture.js';

export interface Step {
  /** Time moved on the node's clock before the request, in ms. */
  advanceMs?: number;
  method?: string;
  headers?: RequestFields;
  body?: string;
  /** What the answer must have: status, X-Cache, body. */
  status?: number;
  xCache?: string;
  answerBody?: string;
  /** Fields the answer must carry with exactly these values; undefined means the field must be absent. */
  fields?: Record<string, string | undefined>;
  /** Requests the origin has had for the path once this step is answered. */
  originRequests?: number;
}

/**
 * Sets what the origin answers for `path` (undefined: keeps what it was set to), runs the steps in
 * order and returns the answers.
 */
export async function exchange(f: CachingFixture, path: string, reply: PathReply | undefined, steps: readonly Step[]): Promise<Answer[]> {
  if (reply !== undefined) f.on(path, reply);
  const answers: Answer[] = [];
  for (const [index, step] of steps.entries()) {
    if (step.advanceMs) f.svc.clock.advance(step.advanceMs);
    const answer = await f.get(path, {
      ...(step.method ? { method: step.method } : {}),
      ...(step.headers ? { headers: step.headers } : {}),
      ...(step.body !== undefined ? { body: step.body } : {}),
    });
    const at = `step ${index + 1} (${step.method ?? 'GET'} ${path})`;
    if (step.status !== undefined) assert.equal(answer.status, step.status, `${at}: status`);
    if (step.xCache !== undefined) assert.equal(header(answer, 'x-cache'), step.xCache, `${at}: X-Cache`);
    if (step.answerBody !== undefined) assert.equal(answer.body, step.answerBody, `${at}: body`);
    for (const [name, value] of Object.entries(step.fields ?? {})) assert.equal(header(answer, name), value, `${at}: ${name}`);
    if (step.originRequests !== undefined) assert.equal(f.originRequests(path).length, step.originRequests, `${at}: origin requests`);
    answers.push(answer);
  }
  return answers;
}
