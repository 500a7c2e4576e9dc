// Profiling endpoints (spec §4.1 `/debug/pprof/*`, mounted only when `admin.pprof_enabled`): a V8
// heap snapshot and a CPU profile of N seconds, in the formats Chrome DevTools opens (Memory tab:
// *.heapsnapshot; Performance tab: *.cpuprofile). One profile at a time: both stall or slow the
// process, and two at once would only measure each other.
import type { ServerResponse } from 'node:http';
import { Session } from 'node:inspector/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { CPU_PROFILE_DEFAULT_SECONDS, CPU_PROFILE_MAX_SECONDS, CPU_PROFILE_MIN_SECONDS } from '../api/limits.js';
import { ApiError } from '../api/api-error.js';
import { InvalidRequestError } from './json-body.js';
import { requireToken } from './auth.js';
import type { AdminRouter } from './router.js';
import { sendJson } from './json-response.js';

export class ProfilerBusyError extends ApiError {
  constructor() {
    super(409, 'profiler_busy', 'another heap snapshot or CPU profile is being taken; retry when it is done');
  }
}

function attachmentHeaders(contentType: string, extension: string): Record<string, string> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    'content-type': contentType,
    'content-disposition': `attachment; filename="svc-${stamp}.${extension}"`,
    'cache-control': 'no-store',
  };
}

function profileSeconds(raw: string | null): number {
  if (raw === null) return CPU_PROFILE_DEFAULT_SECONDS;
  const seconds = Number(raw);
  if (!/^\d+$/.test(raw) || seconds < CPU_PROFILE_MIN_SECONDS || seconds > CPU_PROFILE_MAX_SECONDS) {
    throw new InvalidRequestError(
      `seconds: expected an integer from ${CPU_PROFILE_MIN_SECONDS} to ${CPU_PROFILE_MAX_SECONDS}, got ${JSON.stringify(raw)}`,
    );
  }
  return seconds;
}

async function writeHeapSnapshot(response: ServerResponse): Promise<void> {
  const session = new Session();
  session.connect();
  try {
    response.writeHead(200, attachmentHeaders('application/octet-stream', 'heapsnapshot'));
    session.on('HeapProfiler.addHeapSnapshotChunk', (message) => response.write(message.params.chunk));
    await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    response.end();
  } finally {
    session.disconnect();
  }
}

async function writeCpuProfile(response: ServerResponse, seconds: number): Promise<void> {
  const session = new Session();
  session.connect();
  // A client that goes away ends the profile early; nobody is left to receive it.
  const gone = new AbortController();
  response.once('close', () => gone.abort());
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    await sleep(seconds * 1000, undefined, { signal: gone.signal }).catch(() => undefined);
    const { profile } = await session.post('Profiler.stop');
    if (gone.signal.aborted) return;
    const text = JSON.stringify(profile);
    response.writeHead(200, { ...attachmentHeaders('application/json', 'cpuprofile'), 'content-length': String(Buffer.byteLength(text)) });
    response.end(text);
  } finally {
    session.disconnect();
  }
}

export function mountPprofRoutes(router: AdminRouter, check: Parameters<typeof requireToken>[0]): void {
  let busy = false;
  const exclusive = async (work: () => Promise<void>): Promise<void> => {
    if (busy) throw new ProfilerBusyError();
    busy = true;
    try {
      await work();
    } finally {
      busy = false;
    }
  };

  router.on(
    'GET',
    '/debug/pprof/',
    requireToken(check, (_request, response) =>
      sendJson(response, 200, {
        profiles: [
          { path: '/debug/pprof/heap', description: 'V8 heap snapshot (.heapsnapshot, Chrome DevTools Memory tab)' },
          {
            path: '/debug/pprof/profile?seconds=N',
            description: `CPU profile of N seconds, ${CPU_PROFILE_MIN_SECONDS}..${CPU_PROFILE_MAX_SECONDS}, default ${CPU_PROFILE_DEFAULT_SECONDS} (.cpuprofile, Chrome DevTools Performance tab)`,
          },
        ],
      }),
    ),
  );
  router.on('GET', '/debug/pprof/heap', requireToken(check, (_request, response) => exclusive(() => writeHeapSnapshot(response))));
  router.on(
    'GET',
    '/debug/pprof/profile',
    requireToken(check, (request, response) => {
      const seconds = profileSeconds(request.query.get('seconds'));
      return exclusive(() => writeCpuProfile(response, seconds));
    }),
  );
}
