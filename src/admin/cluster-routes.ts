// `GET /v1/cluster/peers` (spec §4.1, no token): the members this node knows of, itself included, in
// every mode; an empty array on a node that runs alone.
import type { Peer } from '../api/responses.js';
import type { AdminRouter } from './router.js';
import { sendJson } from './json-response.js';

export function mountClusterRoutes(router: AdminRouter, peers: () => Peer[]): void {
  router.on('GET', '/v1/cluster/peers', (_request, response) => sendJson(response, 200, peers()));
}
