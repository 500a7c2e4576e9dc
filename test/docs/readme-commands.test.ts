// Issue 21 item 6: the README's commands work as written, in bash and in zsh (macOS's shell, where an
// unquoted `?` is a glob that fails), and `npm start` takes its addresses from the environment and
// says in one line which variable to change when a port is taken. The tour and invalidation blocks
// run for real against the demo, on free ports (the only rewrite: those ports, and `npx svc` as the
// compiled CLI).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { DEMO_DEFAULTS } from '../../examples/demo/demo-env.js';
import { freePort } from '../../bench/support/free-port.js';
import { eventually } from '../support/eventually.js';
import { fetchRaw } from '../support/http.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');
const START = join(REPO, 'dist', 'examples', 'demo', 'start.js');
const ORIGIN = join(REPO, 'dist', 'examples', 'demo', 'origin.js');

/** The README's shell blocks, each as its lines. */
function shellBlocks(): string[][] {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!.trimEnd().split('\n'));
}

/** The line without quoted parts and without its trailing comment. */
function unquoted(line: string): string {
  let text = '';
  let quote: string | undefined;
  for (const [index, char] of [...line].entries()) {
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      continue;
    }
    if (char === "'" || char === '"') quote = char;
    else if (char === '#' && (index === 0 || /\s/.test(line[index - 1]!))) break;
    else text += char;
  }
  return text;
}

function hasShell(name: string): boolean {
  return spawnSync(name, ['-c', 'true']).status === 0;
}

function runIn(shell: 'bash' | 'zsh', script: string, cwd: string, env: NodeJS.ProcessEnv): { status: number | null; output: string } {
  const strict = shell === 'bash' ? 'set -eo pipefail' : 'setopt errexit pipefail';
  const result = spawnSync(shell, ['-c', `${strict}\n${script}`], { cwd, env, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('README commands', () => {
  test('no shell block has an unquoted glob character (zsh fails on a ? that matches no file)', () => {
    const offending = shellBlocks()
      .flat()
      .filter((line) => /[?*[\]]/.test(unquoted(line)));
    assert.deepEqual(offending, []);
  });

  test('examples/single-node.yaml forwards to the demo origin that npm run demo-origin starts', () => {
    const config = parse(readFileSync(join(REPO, 'examples', 'single-node.yaml'), 'utf8')) as { listen: string; admin: { listen: string }; pools: { upstreams: string[] }[] };
    assert.equal(config.listen, DEMO_DEFAULTS.SVC_LISTEN);
    assert.equal(config.admin.listen, DEMO_DEFAULTS.SVC_ADMIN_LISTEN);
    assert.deepEqual(config.pools[0]!.upstreams, [`http://127.0.0.1:${DEMO_DEFAULTS.DEMO_ORIGIN_PORT}`]);
    const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    assert.equal(scripts['demo-origin'], 'node dist/examples/demo/origin.js');
  });

  describe('against npm start on free ports', () => {
    let cwd: string;
    let demo: ChildProcess;
    let ports: { data: number; admin: number; origin: number };
    let env: NodeJS.ProcessEnv;

    before(async () => {
      cwd = await mkdtemp(join(tmpdir(), 'svc-readme-'));
      ports = { data: await freePort(), admin: await freePort(), origin: await freePort() };
      env = { PATH: process.env.PATH, HOME: cwd, NO_COLOR: '1' };
      demo = spawn(process.execPath, [START], {
        cwd,
        stdio: 'ignore',
        env: { ...env, SVC_LISTEN: `127.0.0.1:${ports.data}`, SVC_ADMIN_LISTEN: `127.0.0.1:${ports.admin}`, DEMO_ORIGIN_PORT: String(ports.origin) },
      });
      await eventually(
        'npm start ready',
        async () => (await fetchRaw(`http://127.0.0.1:${ports.admin}/readyz`)).status,
        (status) => {
          assert.equal(demo.exitCode, null, 'npm start exited before it was ready');
          return status === 200;
        },
        { timeoutMs: 15_000, everyMs: 100, tolerateErrors: true },
      );
    });
    after(async () => {
      demo.kill('SIGTERM');
      if (demo.exitCode === null) await once(demo, 'exit');
      await rm(cwd, { recursive: true, force: true });
    });

    /** A block as it runs here: the demo's ports, and `npx svc` as the compiled CLI told its server. */
    function localised(lines: string[]): string {
      return lines
        .map((line) =>
          line
            .replaceAll('localhost:8080', `localhost:${ports.data}`)
            .replaceAll('localhost:9000', `localhost:${ports.admin}`)
            .replace(/^npx svc (\S+)(.*?)(\s+#.*)?$/, (_, command: string, rest: string) => `node ${CLI} ${command}${rest} --server 127.0.0.1:${ports.admin}`),
        )
        .join('\n');
    }

    for (const shell of ['bash', 'zsh'] as const) {
      test(`the tour and the invalidation blocks run in ${shell}`, (context) => {
        if (!hasShell(shell)) {
          context.skip(`${shell} is not installed here`);
          return;
        }
        const blocks = shellBlocks().filter((lines) => lines.some((line) => line.includes('localhost:8080')));
        assert.equal(blocks.length, 2, 'the tour block and the invalidation block');
        for (const lines of blocks) {
          const ran = runIn(shell, localised(lines), cwd, env);
          assert.equal(ran.status, 0, `${shell}:\n${localised(lines)}\n---\n${ran.output}`);
        }
      });
    }
  });

  test('npm start and npm run demo-origin: a taken port is one line naming the variable to change', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'svc-readme-'));
    const squatter = createServer();
    const taken = await freePort();
    await new Promise<void>((resolve) => squatter.listen(taken, '127.0.0.1', resolve));
    const run = async (script: string, extra: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> => {
      const child = spawn(process.execPath, [script], { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, ...extra } });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const [code] = (await once(child, 'exit')) as [number | null];
      return { code, stderr };
    };
    try {
      const free = { SVC_ADMIN_LISTEN: `127.0.0.1:${await freePort()}`, DEMO_ORIGIN_PORT: String(await freePort()) };
      const data = await run(START, { ...free, SVC_LISTEN: `127.0.0.1:${taken}` });
      assert.equal(data.code, 1);
      assert.equal(data.stderr, `npm start: the data-plane listener cannot open 127.0.0.1:${taken}: address already in use (EADDRINUSE); set SVC_LISTEN to another address\n`);
      const origin = await run(START, { ...free, SVC_LISTEN: `127.0.0.1:${await freePort()}`, DEMO_ORIGIN_PORT: String(taken) });
      assert.equal(origin.code, 1);
      assert.equal(origin.stderr, `npm start: the demo origin cannot open 127.0.0.1:${taken}: address already in use (EADDRINUSE); set DEMO_ORIGIN_PORT to another port\n`);
      const typo = await run(START, { SVC_LISTEN: '8080' });
      assert.equal(typo.code, 2);
      assert.equal(typo.stderr, 'npm start: SVC_LISTEN must be host:port (like 127.0.0.1:8080), got "8080"\n');
      const alone = await run(ORIGIN, { DEMO_ORIGIN_PORT: String(taken) });
      assert.equal(alone.code, 1);
      assert.equal(alone.stderr, `demo-origin: the demo origin cannot open 127.0.0.1:${taken}: address already in use (EADDRINUSE); set DEMO_ORIGIN_PORT to another port\n`);
    } finally {
      squatter.close();
      await rm(cwd, { recursive: true, force: true });
    }
  });
});
