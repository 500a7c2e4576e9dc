// The dashboard's two static files, the script and the style sheet, shipped in the package beside
// this module's source and read once when the routes are mounted. Nothing is fetched from anywhere
// else, so the dashboard works offline. Each answer carries an ETag; the browser revalidates.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';

/** Compiled to dist/src/admin/dashboard/, so the package root is four levels up (like build-info). */
const ASSET_DIRECTORY = new URL('../../../../src/admin/dashboard/assets/', import.meta.url);

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  'dashboard.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
};

interface Asset {
  body: Buffer;
  mediaType: string;
  etag: string;
}

export class DashboardAssets {
  readonly #assets = new Map<string, Asset>();

  /** Reads every asset now; a missing one is a packaging fault and stops the node from starting. */
  constructor() {
    for (const [name, mediaType] of Object.entries(MEDIA_TYPES)) {
      const body = readFileSync(new URL(name, ASSET_DIRECTORY));
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      this.#assets.set(name, { body, mediaType, etag });
    }
  }

  /** Answers the named asset (200, or 304 when the browser's copy is current); false if unknown. */
  serve(name: string, requestHeaders: IncomingHttpHeaders, response: ServerResponse): boolean {
    const asset = this.#assets.get(name);
    if (asset === undefined) return false;
    const headers = {
      'content-type': asset.mediaType,
      etag: asset.etag,
      // Revalidated on every load: an upgraded node must not run last version's script.
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    };
    if (requestHeaders['if-none-match'] === asset.etag) {
      response.writeHead(304, headers).end();
    } else {
      response.writeHead(200, { ...headers, 'content-length': asset.body.length }).end(asset.body);
    }
    return true;
  }
}
