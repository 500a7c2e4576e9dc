// The libp2p transport's packages are optional peer dependencies of svc (docs/libp2p.md): a node on
// the default UDP transport, or a program that only uses the admin client, does not install them.
// A node configured with `cluster.transport: libp2p` checks for them first, so that their absence is
// one sentence naming what to install rather than a module-resolution stack trace.

/** Kept equal to package.json `peerDependencies` (test/package/package-install.test.ts checks). */
export const LIBP2P_PACKAGES = [
  '@libp2p/crypto',
  '@libp2p/gossipsub',
  '@libp2p/identify',
  '@libp2p/interface',
  '@libp2p/noise',
  '@libp2p/peer-id',
  '@libp2p/tcp',
  '@libp2p/yamux',
  '@multiformats/multiaddr',
  'libp2p',
] as const;

/** The libp2p packages that cannot be found from svc's own location. */
export function missingLibp2pPackages(resolve: (specifier: string) => string = (specifier) => import.meta.resolve(specifier)): string[] {
  return LIBP2P_PACKAGES.filter((name) => {
    try {
      resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}

/** What an operator reads when the libp2p transport is configured but its packages are missing. */
export function missingLibp2pMessage(missing: readonly string[]): string {
  return `the libp2p transport needs its optional packages, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not installed: install them beside svc (npm install ${LIBP2P_PACKAGES.join(' ')}) or use transport: udp`;
}
