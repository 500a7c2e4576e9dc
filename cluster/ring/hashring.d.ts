// The part of the `hashring` package (CommonJS, no bundled types) that ring.ts uses.
declare module 'hashring' {
  interface HashRingOptions {
    /** Virtual nodes per server before replicas; the package default is 40. */
    'vnode count'?: number;
    'max cache size'?: number;
  }

  class HashRing {
    constructor(servers: string[], algorithm?: string, options?: HashRingOptions);
    /** The server owning `key`, or undefined when the ring is empty. */
    get(key: string): string | undefined;
    /** Up to `size` distinct servers, walking the ring clockwise from `key`. */
    range(key: string, size?: number, unique?: boolean): string[];
  }

  export default HashRing;
}
