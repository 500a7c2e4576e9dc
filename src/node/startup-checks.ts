// What the configuration names outside itself, checked before a node starts (and by `svc config
// validate`): files that must be readable (TLS certificates and keys; a listener's must also hold a
// certificate and its key), directories that must be writable or creatable (the warm tier, the
// libp2p key directory), the libp2p packages when that transport is chosen, and SVC_ADMIN_TOKEN.
// Each problem names its key and the system's reason, so a missing key file reads `cluster.tls.key:
// cannot read "/etc/svc/node.key": no such file or directory (ENOENT)` rather than a bare ENOENT from
// deep inside startup.
import { constants } from 'node:fs';
import { access, open, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Config, ConfigIssue } from '../config/index.js';
import { adminTokenEnvIssue } from '../admin/admin-token.js';
import { nodeInternalsEnvIssue } from '../runtime/node-internals.js';
import { missingLibp2pMessage, missingLibp2pPackages } from '../clustering/libp2p-packages.js';
import { readListenerCertificates } from '../tls/listener-certificates.js';

/** The system's error codes in the words an operator searches for. */
const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'is a directory',
  EROFS: 'read-only file system',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
};

export function fsReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code !== undefined && REASONS[code] !== undefined ? `${REASONS[code]} (${code})` : (error as Error).message;
}

/** Why `path` cannot be read as a file, or undefined when it can. */
async function unreadableFile(path: string): Promise<string | undefined> {
  try {
    const file = await open(path, 'r');
    try {
      const info = await file.stat();
      return info.isFile() ? undefined : `cannot read ${JSON.stringify(path)}: it is not a regular file`;
    } finally {
      await file.close();
    }
  } catch (error) {
    return `cannot read ${JSON.stringify(path)}: ${fsReason(error)}`;
  }
}

/**
 * Why `path` cannot be used as a writable directory, or undefined when it can: it exists as one and
 * is writable, or the nearest existing directory above it is writable, so it can be created.
 */
async function unwritableDirectory(path: string): Promise<string | undefined> {
  const cannot = `cannot use ${JSON.stringify(path)} as a writable directory`;
  let current = resolve(path);
  for (;;) {
    let info;
    try {
      info = await stat(current);
    } catch (error) {
      const parent = dirname(current);
      // Missing, or below a file: the nearest existing part above says which.
      const code = (error as NodeJS.ErrnoException).code;
      if ((code === 'ENOENT' || code === 'ENOTDIR') && parent !== current) {
        current = parent;
        continue;
      }
      return `${cannot}: ${fsReason(error)}`;
    }
    const where = current === resolve(path) ? '' : ` (${current}, where it would be created)`;
    if (!info.isDirectory()) return `${cannot}: ${current} is not a directory`;
    try {
      await access(current, constants.W_OK | constants.X_OK);
      return undefined;
    } catch (error) {
      return `${cannot}${where}: ${fsReason(error)}`;
    }
  }
}

/** Every problem of the machine with this configuration; empty when the node can start. */
export async function checkStartup(config: Config, env: NodeJS.ProcessEnv): Promise<ConfigIssue[]> {
  const checks: Promise<ConfigIssue | undefined>[] = [];
  const file = (path: string, value: string): void => {
    checks.push(unreadableFile(value).then((message) => (message === undefined ? undefined : { path, message })));
  };
  const directory = (path: string, value: string): void => {
    checks.push(unwritableDirectory(value).then((message) => (message === undefined ? undefined : { path, message })));
  };
  if (config.warm) directory('warm.path', config.warm.path);
  const cluster = config.cluster;
  if (cluster?.tls) {
    file('cluster.tls.cert', cluster.tls.cert);
    file('cluster.tls.key', cluster.tls.key);
    file('cluster.tls.ca', cluster.tls.ca);
  }
  if (cluster?.libp2p) directory('cluster.libp2p.data_dir', cluster.libp2p.data_dir);
  const listenerTls = [
    ['tls', config.tls],
    ['admin.tls', config.admin.tls],
  ] as const;
  for (const [key, tls] of listenerTls) {
    tls?.certificates.forEach((pair, i) => {
      file(`${key}.certificates[${i}].cert`, pair.cert);
      file(`${key}.certificates[${i}].key`, pair.key);
    });
  }
  const issues = (await Promise.all(checks)).filter((issue) => issue !== undefined);
  // Readable: then what they hold must be a certificate and its key, which OpenSSL accepts.
  if (issues.length === 0) {
    for (const [key, tls] of listenerTls) {
      const read = tls && (await readListenerCertificates(key, tls));
      if (read?.ok === false) issues.push(...read.issues);
    }
  }
  if (cluster?.transport === 'libp2p') {
    const missing = missingLibp2pPackages();
    if (missing.length > 0) issues.push({ path: 'cluster.transport', message: missingLibp2pMessage(missing) });
  }
  const token = adminTokenEnvIssue(env);
  if (token) issues.push(token);
  const internals = nodeInternalsEnvIssue(env);
  if (internals) issues.push(internals);
  return issues;
}
