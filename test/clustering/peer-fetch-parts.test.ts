// The parts a peer-fetch body crosses in (peer-fetch-wire.ts, peer-fetch-streams.ts): the wire
// round-trips and refuses what is malformed, a body still arriving is read only when a part is asked
// for and never makes a part wait past its bound, and the owner's streams are bounded and expire.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import {
  decodePeerFetchAnswer,
  decodePeerFetchMessage,
  decodePeerFetchPart,
  encodePeerFetchAnswer,
  encodePeerFetchPart,
  encodePeerFetchPartRequest,
  encodePeerFetchRequest,
  MalformedPeerFetchError,
} from '../../src/clustering/peer-fetch-wire.js';
import { bufferSource, PeerFetchStreams, readableSource, UnknownPeerStreamError } from '../../src/clustering/peer-fetch-streams.js';
import { PeerBodyStream } from '../../src/clustering/peer-body-stream.js';
import { eventually } from '../support/eventually.js';

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('latin1');

describe('peer-fetch wire', () => {
  test('requests, answers and parts round-trip', () => {
    const open = { method: 'GET', path: '/a?b', headers: ['host', 'x.example'], hops: 1 };
    assert.deepEqual(decodePeerFetchMessage(encodePeerFetchRequest(open)), { kind: 'open', ...open });
    assert.deepEqual(decodePeerFetchMessage(encodePeerFetchPartRequest({ stream: 's1', offset: 42 })), { kind: 'part', stream: 's1', offset: 42 });
    const answer = decodePeerFetchAnswer(
      encodePeerFetchAnswer({ kind: 'answer', status: 200, fields: ['x-cache', 'HIT'], body: Buffer.from('first'), more: { stream: 's1', node: 'b' } }),
    );
    assert.equal(answer.kind, 'answer');
    if (answer.kind === 'answer') {
      assert.equal(text(answer.body), 'first');
      assert.deepEqual(answer.more, { stream: 's1', node: 'b' });
    }
    assert.deepEqual(decodePeerFetchAnswer(encodePeerFetchAnswer({ kind: 'refused', reason: 'too_large' })), { kind: 'refused', reason: 'too_large' });
    const part = decodePeerFetchPart(encodePeerFetchPart({ body: Buffer.from('rest'), more: false }));
    assert.equal(text(part.body), 'rest');
    assert.equal(part.more, false);
  });

  test('malformed payloads are refused with MalformedPeerFetchError', () => {
    const bad: Uint8Array[] = [
      Buffer.from('not json'),
      Buffer.from(JSON.stringify({ v: 1, method: 'GET', path: '/', headers: [], hops: 1 })),
      Buffer.from(JSON.stringify({ v: 2, method: 'POST', path: '/', headers: [], hops: 1 })),
      Buffer.from(JSON.stringify({ v: 2, stream: 's', offset: -1 })),
      Buffer.from(JSON.stringify({ v: 2, stream: '', offset: 0 })),
    ];
    for (const bytes of bad) assert.throws(() => decodePeerFetchMessage(bytes), MalformedPeerFetchError);
    assert.throws(() => decodePeerFetchAnswer(new Uint8Array(2)), MalformedPeerFetchError);
    const truncated = encodePeerFetchAnswer({ kind: 'answer', status: 200, fields: [], body: new Uint8Array(0), more: undefined }).subarray(0, 6);
    assert.throws(() => decodePeerFetchAnswer(truncated), MalformedPeerFetchError);
    const noNode = Buffer.from(JSON.stringify({ v: 2, status: 200, fields: [], stream: 's' }));
    const framed = Buffer.concat([Buffer.from([0, 0, 0, noNode.length]), noNode]);
    assert.throws(() => decodePeerFetchAnswer(framed), MalformedPeerFetchError);
  });
});

describe('part sources', () => {
  test('a stored body is sent as parts of the asked size, views into it', async () => {
    const body = Buffer.from('abcdefghij');
    const source = bufferSource(body, 0);
    const first = await source.next(4);
    assert.deepEqual([text(first.body), first.more], ['abcd', true]);
    assert.equal(first.body.buffer, body.buffer, 'no copy');
    assert.deepEqual(await source.next(4).then((p) => [text(p.body), p.more]), ['efgh', true]);
    assert.deepEqual(await source.next(4).then((p) => [text(p.body), p.more]), ['ij', false]);
  });

  test('a body still arriving: a part is what has arrived, up to the bound; an empty part when nothing comes in time', async () => {
    const body = new PassThrough();
    const source = readableSource(body, 50);
    body.write(Buffer.from('aaaa'));
    body.write(Buffer.from('bbbb'));
    const first = await source.next(6);
    assert.deepEqual([text(first.body), first.more], ['aaaabb', true]);
    const second = await source.next(6);
    assert.deepEqual([text(second.body), second.more], ['bb', true], 'the rest of a chunk that went past the bound');
    const waited = await source.next(6);
    assert.deepEqual([waited.body.length, waited.more], [0, true], 'nothing arrived: an empty part, more to come');
    body.end(Buffer.from('cc'));
    const last = await source.next(6);
    assert.equal(text(last.body), 'cc');
    const end = last.more ? await source.next(6) : last;
    assert.equal(end.more, false);
  });
});

describe('a body of announced length', () => {
  test('on the owner, the part that reaches the length is the last, though the body has not ended yet', async () => {
    const body = new PassThrough();
    body.write(Buffer.from('aaaa'));
    body.write(Buffer.from('bbbb'));
    const whole = await readableSource(body, 50, 8).next(100);
    assert.deepEqual([text(whole.body), whole.more], ['aaaabbbb', false]);

    const split = new PassThrough();
    split.write(Buffer.from('aaaabbbb'));
    const source = readableSource(split, 50, 8);
    assert.deepEqual(await source.next(6).then((p) => [text(p.body), p.more]), ['aaaabb', true], 'past the bound: the rest follows');
    assert.deepEqual(await source.next(6).then((p) => [text(p.body), p.more]), ['bb', false]);

    // Waiting would give an empty part with more to come, after 5 s.
    const empty = await readableSource(new PassThrough(), 5_000, 0).next(100);
    assert.deepEqual([empty.body.length, empty.more], [0, false], 'a length of 0 (a HEAD) waits for nothing');
  });

  test('on the asker, a body whole by its length ends without asking the owner again', async () => {
    let asked = 0;
    const ownerGone = async (): Promise<never> => {
      asked += 1;
      throw new Error('the owner is gone');
    };
    const whole = new PeerBodyStream(ownerGone, Buffer.from('complete'), true, 8);
    assert.equal(Buffer.concat(await whole.toArray()).toString(), 'complete');
    assert.equal(asked, 0);

    // Without a length, the owner's "more" is asked for, and its failure fails the body.
    const unknown = new PeerBodyStream(ownerGone, Buffer.from('partial'), true);
    await assert.rejects(unknown.toArray(), /the owner is gone/);
    assert.equal(asked, 1);
  });
});

describe('the owner\'s streams', () => {
  test('a part must be asked at the stream\'s next offset; the last part closes the stream', async () => {
    const streams = new PeerFetchStreams({ maxStreams: 4, idleMs: 60_000, partBytes: 3 });
    const id = streams.open(bufferSource(Buffer.from('abcdef'), 0), 0)!;
    await assert.rejects(streams.part(id, 1), UnknownPeerStreamError);
    assert.equal(text((await streams.part(id, 0)).body), 'abc');
    const last = await streams.part(id, 3);
    assert.deepEqual([text(last.body), last.more], ['def', false]);
    await assert.rejects(streams.part(id, 6), UnknownPeerStreamError, 'closed after its last part');
    streams.closeAll();
  });

  test('streams are bounded in number, and one nobody asks a part of is closed', async () => {
    const streams = new PeerFetchStreams({ maxStreams: 2, idleMs: 20, partBytes: 3 });
    const body = new PassThrough();
    const ids = [streams.open(readableSource(body, 10), 0), streams.open(bufferSource(Buffer.from('xyz'), 0), 0)];
    assert.ok(ids.every((id) => id !== undefined));
    assert.equal(streams.open(bufferSource(Buffer.from('xyz'), 0), 0), undefined, 'no third stream');
    // Nobody asks a part: within its 20 ms idle time, the stream closes its source.
    await eventually('the idle stream closing its source', () => body.destroyed, (destroyed) => destroyed);
    await assert.rejects(streams.part(ids[0]!, 0), UnknownPeerStreamError);
    assert.notEqual(streams.open(bufferSource(Buffer.from('xyz'), 0), 0), undefined, 'room again');
    streams.closeAll();
  });
});
