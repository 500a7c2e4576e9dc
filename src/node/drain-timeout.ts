// How long a drain waits for in-flight requests, in its own module: the node and both data sides
// (single thread, worker thread) read it, and the node imports the data sides.

/** As long as the slowest origin is allowed to take. */
export const DRAIN_TIMEOUT_MS = 30_000;
