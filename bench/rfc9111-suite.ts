// Issue 27: the public HTTP caching test suite (https://cache-tests.fyi, RFC 9111) through `svc serve`
// with the default configuration (a data-plane thread per core) and with `workers: 1`, in one run, so
// that the two scores can be compared: the number of threads must not change what a client sees.
// Issue 32: and over HTTPS on the defaults (svc terminating TLS with a certificate made by
// examples/tls/make-certs.sh, which the suite's client trusts through NODE_EXTRA_CA_CERTS): TLS must
// not change it either.
//
//   npm run build && node dist/bench/rfc9111-suite.js --suite <checkout of github.com/http-tests/cache-tests>
//
// The suite is not a dependency: its published package is years behind its repository and pulls in
// npm itself. Its test server and client need nothing beyond Node. For each configuration this starts
// the suite's server, svc in front of it, runs the suite's client against svc, and counts the results
// the way the suite's own summary does (a test whose dependency failed counts as not passed). It prints
// figures and the tests whose result differs from the first configuration's; it asserts nothing.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startProcess, waitFor, type Started } from './support/processes.js';

const { values } = parseArgs({ options: { suite: { type: 'string' } } });
if (values.suite === undefined) {
  console.error('usage: node dist/bench/rfc9111-suite.js --suite <checkout of github.com/http-tests/cache-tests>');
  process.exit(2);
}
const SUITE = resolve(values.suite);
const SVC_CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const LOOPBACK_LISTEN = fileURLToPath(new URL('./support/loopback-listen.js', import.meta.url));
const MAKE_CERTS = fileURLToPath(new URL('../../examples/tls/make-certs.sh', import.meta.url));
const SUITE_PORT = 18_400;

interface SuiteTest {
  id: string;
  kind?: 'required' | 'optimal' | 'check';
}
type Results = Record<string, unknown>;
type Verdict = readonly [string, string, string];

const { default: suites } = (await import(pathToFileURL(join(SUITE, 'tests/index.mjs')).href)) as { default: { tests: SuiteTest[] }[] };
const { determineTestResult, resultTypes } = (await import(pathToFileURL(join(SUITE, 'test-engine/lib/results.mjs')).href)) as {
  determineTestResult: (suites: unknown, id: string, results: Results) => Verdict;
  resultTypes: Record<string, Verdict>;
};

interface Configuration {
  name: string;
  lines: string[];
  /** https: svc terminates TLS with the certificate in the run's directory. */
  scheme: 'http' | 'https';
}

const configurations = (certificates: string): Configuration[] => [
  { name: 'defaults (a thread per core)', lines: [], scheme: 'http' },
  { name: 'workers: 1', lines: ['workers: 1'], scheme: 'http' },
  {
    name: 'defaults over HTTPS',
    lines: [`tls: { certificates: [{ cert: "${join(certificates, 'localhost.pem')}", key: "${join(certificates, 'localhost-key.pem')}" }] }`],
    scheme: 'https',
  },
];

/**
 * Runs the suite's client against `base` (`http(s)://host:port`); its results are the JSON it
 * prints. `caFile`: the CA an https base's certificate chains to, trusted through the environment.
 */
function runClient(base: string, caFile: string | undefined): Promise<Results> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['--no-warnings', join(SUITE, 'test-engine/cli.mjs')], {
      // The client reads npm's config variables; an empty id runs every test.
      env: { ...process.env, npm_config_base: base, npm_package_config_id: '', ...(caFile === undefined ? {} : { NODE_EXTRA_CA_CERTS: caFile }) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`the suite's client exited with ${code}`));
      resolvePromise(JSON.parse(out.slice(out.indexOf('{'))) as Results);
    });
  });
}

interface Score {
  name: string;
  verdicts: Map<string, Verdict>;
}

async function score({ name, lines, scheme }: Configuration, dir: string, index: number): Promise<Score> {
  const port = SUITE_PORT + 1 + index;
  const adminPort = SUITE_PORT + 11 + index;
  const config = join(dir, `svc-${index}.yaml`);
  await writeFile(
    config,
    [
      `listen: 127.0.0.1:${port}`,
      `admin: { listen: "127.0.0.1:${adminPort}", token: suite-admin-token-0123456789 }`,
      ...lines,
      `pools: [{ name: suite, upstreams: ["http://127.0.0.1:${SUITE_PORT}"] }]`,
      'routes: [{ name: suite, match: { path_prefix: / }, pool: suite }]',
    ].join('\n'),
  );
  const svc = startProcess(process.execPath, [SVC_CLI, 'serve', '--config', config]);
  try {
    await waitFor(`http://127.0.0.1:${adminPort}/readyz`);
    const results = await runClient(`${scheme}://127.0.0.1:${port}`, scheme === 'https' ? join(dir, 'ca.pem') : undefined);
    const verdicts = new Map<string, Verdict>();
    for (const suite of suites) for (const test of suite.tests) verdicts.set(test.id, determineTestResult(suites, test.id, results));
    return { name, verdicts };
  } finally {
    await svc.stop();
  }
}

function summary({ verdicts }: Score, kind: 'required' | 'optimal'): string {
  let passed = 0;
  let total = 0;
  for (const suite of suites) {
    for (const test of suite.tests) {
      if ((test.kind ?? 'required') !== kind) continue;
      total += 1;
      if (verdicts.get(test.id) === resultTypes.pass) passed += 1;
    }
  }
  return `${passed}/${total}`;
}

const dir = await mkdtemp(join(tmpdir(), 'svc-bench-rfc9111-'));
// A CA and a certificate for 127.0.0.1, as an operator trying TLS out would make them.
execFileSync(MAKE_CERTS, [dir], { stdio: 'ignore' });
const server: Started = startProcess(process.execPath, ['--import', LOOPBACK_LISTEN, join(SUITE, 'test-engine/server/server.mjs')], {
  npm_config_protocol: 'http',
  npm_config_port: String(SUITE_PORT),
  npm_config_pidfile: join(dir, 'suite-server.pid'),
});
try {
  await waitFor(`http://127.0.0.1:${SUITE_PORT}/absent`, 20_000, 404);
  const scores: Score[] = [];
  for (const [i, configuration] of configurations(dir).entries()) scores.push(await score(configuration, dir, i));
  console.log(`\nRFC 9111 cache-tests (${SUITE}), Node ${process.version}`);
  console.log(`${'configuration'.padEnd(32)}${'required'.padStart(10)}${'optimal'.padStart(10)}`);
  for (const s of scores) console.log(`${s.name.padEnd(32)}${summary(s, 'required').padStart(10)}${summary(s, 'optimal').padStart(10)}`);
  const [first, ...others] = scores as [Score, ...Score[]];
  const failedRequired = suites.flatMap((suite) => suite.tests.filter((test) => (test.kind ?? 'required') === 'required' && first.verdicts.get(test.id) !== resultTypes.pass));
  console.log(`required tests not passed with the ${first.name}: ${failedRequired.map((test) => `${test.id} ${first.verdicts.get(test.id)?.[2]}`).join(', ')}`);
  for (const other of others) {
    const differing = [...first.verdicts].filter(([id, verdict]) => other.verdicts.get(id) !== verdict);
    console.log(differing.length === 0 ? `every test has the same result with the ${first.name} and ${other.name}` : `tests whose result differs with ${other.name}:`);
    for (const [id, verdict] of differing) console.log(`  ${id}: ${verdict[2]} ${first.name}, ${other.verdicts.get(id)?.[2]} ${other.name}`);
  }
} finally {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
}
