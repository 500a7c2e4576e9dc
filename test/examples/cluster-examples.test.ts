// Issue 7 item 9: the example cluster configurations are valid and consistent, and the start script
// brings a three-node strong cluster up on one machine and down again on SIGTERM.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfigFile, type Config } from '../../src/config/index.js';
import { fetchRaw } from '../support/http.js';
import { busyPort, takeExamplePorts } from '../support/example-ports.js';

// Compiled to dist/test/examples/: the package root is three levels up, the compiled tree two.
const packageRoot = fileURLToPath(new URL('../../../', import.meta.url));
const startScript = fileURLToPath(new URL('../../examples/demo/start-cluster.js', import.meta.url));
const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const MODES = ['strong', 'eventual'] as const;
const NAMES = ['a', 'b', 'c'] as const;
const TOKEN = 'cluster-examples-test-token-0123456789';

function examplePath(mode: string, name: string): string {
  return join(packageRoot, 'examples', `cluster-${mode}`, `${name}.yaml`);
}

async function loadMode(mode: string): Promise<Config[]> {
  return Promise.all(NAMES.map((name) => loadConfigFile(examplePath(mode, name))));
}

function port(address: string): number {
  return Number(address.slice(address.lastIndexOf(':') + 1));
}

describe('example cluster configurations', () => {
  for (const mode of MODES) {
    test(`examples/cluster-${mode}/{a,b,c}.yaml pass \`svc config validate\``, () => {
      for (const name of NAMES) {
        const run = spawnSync(process.execPath, [cli, 'config', 'validate', examplePath(mode, name)], { encoding: 'utf8' });
        assert.equal(run.status, 0, `${mode}/${name}: ${run.stdout}${run.stderr}`);
      }
    });

    test(`the ${mode} nodes form one cluster on distinct ports, in front of the demo origin`, async () => {
      const configs = await loadMode(mode);
      const clusters = configs.map((config) => config.cluster!);
      assert.deepEqual(
        clusters.map((cluster) => cluster.node_name),
        [...NAMES],
      );
      assert.ok(clusters.every((cluster) => cluster.mode === mode));
      const binds = clusters.map((cluster) => cluster.bind);
      for (const cluster of clusters) assert.deepEqual([...cluster.join].sort(), [...binds].sort(), 'each node lists all three seeds');
      const ports = configs.flatMap((config, i) => [port(config.listen), port(config.admin.listen), port(binds[i]!)]);
      assert.equal(new Set([...ports, 8080, 9000, 8081]).size, ports.length + 3, 'no port shared, none of the single-node example');
      for (const config of configs) {
        assert.deepEqual(config.pools[0]!.upstreams, ['http://127.0.0.1:8081']);
        assert.equal(config.hop_limit, mode === 'strong' ? 2 : undefined);
      }
      assert.deepEqual(
        configs.map((config) => config.warm?.path),
        NAMES.map((name) => `.svc-data/${mode}-${name}/warm`),
      );
    });
  }

  test('the strong and eventual clusters can run side by side', async () => {
    const all = [...(await loadMode('strong')), ...(await loadMode('eventual'))];
    const ports = all.flatMap((config) => [port(config.listen), port(config.admin.listen), port(config.cluster!.bind)]);
    assert.equal(new Set(ports).size, ports.length);
  });
});

const strong = await loadMode('strong');
const clusterPorts = strong.map((config) => port(config.cluster!.bind));

describe('examples/demo/start-cluster', () => {
  test('a bad argument is one line on stderr and exit code 2', () => {
    const run = spawnSync(process.execPath, [startScript, 'weak'], { encoding: 'utf8' });
    assert.equal(run.status, 2);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^usage: .*strong\|eventual.*weak\)\n$/);
  });

  test(
    'starts the strong cluster, reaches three alive peers and stops cleanly on SIGTERM',
    // 40 s for the cluster, after up to 120 s waiting for another test's turn with the fixed ports.
    { timeout: 160_000 },
    async (context) => {
      const release = await takeExamplePorts();
      const busy = await busyPort([8081, ...strong.flatMap((config) => [port(config.listen), port(config.admin.listen)]), ...clusterPorts], clusterPorts);
      if (busy !== undefined) {
        await release();
        context.skip(`${busy} is in use, and the example cluster needs its fixed ports`);
        return;
      }
      // The nodes' warm tiers and logs go under the directory the script runs in: a temporary one.
      const dir = await mkdtemp(join(tmpdir(), 'svc-start-cluster-'));
      const child = spawn(process.execPath, [startScript, 'strong'], { cwd: dir, env: { ...process.env, SVC_ADMIN_TOKEN: TOKEN }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
      try {
        const bannerShown = new Promise<void>((resolve) => {
          const look = (): void => {
            if (stdout.includes('Ctrl-C stops everything')) resolve();
          };
          child.stdout.on('data', look);
        });
        const first = await Promise.race([bannerShown.then(() => 'banner'), exited.then(() => 'exit')]);
        assert.equal(first, 'banner', `the script exited before the cluster was up: ${stderr}`);
        assert.match(stdout, /admin token {2}cluster-examples-test-token-0123456789 {3}\(from SVC_ADMIN_TOKEN\)/);

        for (const config of strong) {
          assert.ok(stdout.includes(`http://${config.listen}`), `the banner shows ${config.listen}`);
          const peers = JSON.parse((await fetchRaw(`http://${config.admin.listen}/v1/cluster/peers`)).body) as { name: string; state: string; mode: string }[];
          assert.deepEqual(peers.filter((peer) => peer.state === 'alive').map((peer) => peer.name).sort(), [...NAMES]);
          assert.ok(peers.every((peer) => peer.mode === 'strong'));
        }
        // The nodes took the token the script was given.
        const stats = await fetchRaw(`http://${strong[0]!.admin.listen}/v1/stats`, { headers: { authorization: `Bearer ${TOKEN}` } });
        assert.equal(stats.status, 200);

        child.kill('SIGTERM');
        const [code] = await exited;
        assert.equal(code, 0, `clean stop: ${stderr}`);
        await assert.rejects(fetchRaw(`http://${strong[0]!.admin.listen}/healthz`), 'node a stopped with the script');
        assert.equal(await busyPort([8081, ...strong.map((config) => port(config.listen))], clusterPorts), undefined, 'every port released');
      } finally {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          await exited;
        }
        await rm(dir, { recursive: true, force: true });
        await release();
      }
    },
  );
});
