// The certificates of a node's TLS listeners (`tls`, `admin.tls`), kept by its main thread: read at
// startup, read again at every reload (a renewal changes the files under the same paths, so a
// reload takes them though the configuration did not change), watched for expiry, and handed to
// what serves: the admin listener's TLS here, the data plane's to every thread that serves it
// (`onDataChange`). Reading once here and sending the text means every thread serves the same
// certificate, and a bad file is refused once, before any thread changes.
import type { Config } from '../config/index.js';
import { ConfigError, ReloadRefusedError } from '../config/index.js';
import { readListenerCertificates, type ListenerCertificate, type LoadedCertificate } from '../tls/listener-certificates.js';
import { TlsTermination } from '../tls/tls-termination.js';
import type { CertificateExpiry } from '../tls/certificate-expiry.js';
import type { ReloadStep } from './reload/config-reloader.js';

/** The two TLS blocks, by key path, and the listener label their metric and log lines carry. */
const BLOCKS = { tls: 'data', 'admin.tls': 'admin' } as const;
type Block = keyof typeof BLOCKS;

function blockOf(config: Config, block: Block): Config['tls'] {
  return block === 'tls' ? config.tls : config.admin.tls;
}

async function read(config: Config, block: Block): Promise<LoadedCertificate[] | undefined> {
  const tls = blockOf(config, block);
  if (tls === undefined) return undefined;
  const read = await readListenerCertificates(block, tls);
  // checkStartup read them a moment ago: only a file changed since then fails here.
  if (!read.ok) throw new ConfigError(read.issues);
  return read.certificates;
}

function samePem(a: readonly ListenerCertificate[] | undefined, b: readonly ListenerCertificate[] | undefined): boolean {
  return a?.length === b?.length && (a ?? []).every((certificate, i) => certificate.cert === b![i]!.cert && certificate.key === b![i]!.key);
}

export class NodeCertificates {
  /** The admin listener's TLS; undefined when it speaks plain HTTP. */
  readonly admin: TlsTermination | undefined;
  readonly #served: Record<Block, LoadedCertificate[] | undefined>;
  readonly #dataListeners: ((certificates: readonly ListenerCertificate[]) => Promise<void> | void)[] = [];
  #applying: Promise<unknown> = Promise.resolve();

  private constructor(
    served: Record<Block, LoadedCertificate[] | undefined>,
    private readonly expiry: CertificateExpiry,
    handshakeTimeoutMs: number,
  ) {
    this.#served = served;
    this.admin = served['admin.tls'] && new TlsTermination(served['admin.tls'], handshakeTimeoutMs);
    for (const block of Object.keys(BLOCKS) as Block[]) if (served[block]) expiry.watch(BLOCKS[block], served[block]);
  }

  /** Reads the certificates `config` names; the handshake of each listener is bounded by the header timeout. */
  static async load(config: Config, expiry: CertificateExpiry): Promise<NodeCertificates> {
    const [data, admin] = await Promise.all([read(config, 'tls'), read(config, 'admin.tls')]);
    return new NodeCertificates({ tls: data, 'admin.tls': admin }, expiry, config.limits.header_timeout);
  }

  /** The data plane's certificates in force; undefined when it speaks plain HTTP. */
  data(): readonly ListenerCertificate[] | undefined {
    return this.#served.tls;
  }

  /** Told of the data plane's new certificates after a reload took them. */
  onDataChange(listener: (certificates: readonly ListenerCertificate[]) => Promise<void> | void): void {
    this.#dataListeners.push(listener);
  }

  /** Resolves once the last certificates a reload took reached every thread. */
  applied(): Promise<unknown> {
    return this.#applying;
  }

  /** A reload step per block: it runs when the block changed, or when its files did. */
  reloadSteps(): ReloadStep[] {
    return (Object.keys(BLOCKS) as Block[]).map((block) => ({
      keys: [block],
      changedOnDisk: async (next: Config) => blockOf(next, block) !== undefined && !samePem(await read(next, block), this.#served[block]),
      prepare: async (next: Config, previous: Config) => {
        if ((blockOf(next, block) === undefined) !== (blockOf(previous, block) === undefined)) {
          throw new ReloadRefusedError([`${block} cannot be added or removed without a restart: a listener is made plain or TLS at startup`]);
        }
        const certificates = await read(next, block);
        return () => this.#take(block, certificates);
      },
    }));
  }

  stop(): void {
    this.expiry.stop();
  }

  #take(block: Block, certificates: LoadedCertificate[] | undefined): void {
    this.#served[block] = certificates;
    if (certificates === undefined) return;
    this.expiry.watch(BLOCKS[block], certificates);
    if (block === 'admin.tls') this.admin?.replace(certificates);
    else this.#applying = Promise.all(this.#dataListeners.map((listener) => listener(certificates)));
  }
}
