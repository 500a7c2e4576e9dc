// The expiry of the certificates a node serves: the gauge `svc_tls_certificate_expiry_seconds`
// (seconds left, negative once expired, computed when scraped) for each listener's certificates, and
// a WARN line for each one with less than 14 days left, when it is loaded (startup, reload) and once
// a day while it is served, so that a node running for weeks still says so before clients refuse it.
import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../observe/logger.js';
import type { LoadedCertificate } from './listener-certificates.js';

const DAY_MS = 86_400_000;

/** 14 days: a renewal (ACME renews at 30 days left) that failed is noticed with two weeks to act. */
export const EXPIRY_WARNING_MS = 14 * DAY_MS;

export class CertificateExpiry {
  readonly #served = new Map<string, readonly LoadedCertificate[]>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    registry: Registry,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {
    const served = this.#served;
    const gauge: Gauge = new Gauge({
      name: 'svc_tls_certificate_expiry_seconds',
      help: 'Seconds until each certificate a TLS listener serves expires (negative once expired), by listener (data, admin) and name (its first DNS name).',
      labelNames: ['listener', 'name'],
      registers: [registry],
      collect() {
        gauge.reset();
        for (const [listener, certificates] of served) {
          // Two certificates of one name (an RSA and an ECDSA one): the one to renew first is shown.
          const left = new Map<string, number>();
          for (const certificate of certificates) left.set(certificate.label, Math.min(left.get(certificate.label) ?? Infinity, certificate.notAfterMs - now()));
          for (const [name, ms] of left) gauge.set({ listener, name }, ms / 1_000);
        }
      },
    });
    this.#timer = setInterval(() => {
      for (const [listener, certificates] of this.#served) this.#warn(listener, certificates);
    }, DAY_MS).unref();
  }

  /** The certificates `listener` (`data`, `admin`) serves from now on. */
  watch(listener: string, certificates: readonly LoadedCertificate[]): void {
    this.#served.set(listener, certificates);
    this.#warn(listener, certificates);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  #warn(listener: string, certificates: readonly LoadedCertificate[]): void {
    for (const certificate of certificates) {
      const leftMs = certificate.notAfterMs - this.now();
      if (leftMs >= EXPIRY_WARNING_MS) continue;
      this.logger.warn(
        { listener, certificate: certificate.label, not_after: new Date(certificate.notAfterMs).toISOString(), days_left: Math.floor(leftMs / DAY_MS) },
        leftMs <= 0 ? 'TLS certificate has expired' : 'TLS certificate expires in less than 14 days',
      );
    }
  }
}
