// libp2p 3 and its helpers call Promise.withResolvers, which Node added in 22. On Node 20 this module
// installs an equivalent; it must be evaluated before any libp2p module runs, so the transport imports
// it first and loads libp2p with a dynamic import afterwards.

interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

function withResolvers<T>(): Resolvers<T> {
  let resolve!: Resolvers<T>['resolve'];
  let reject!: Resolvers<T>['reject'];
  const promise = new Promise<T>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  });
  return { promise, resolve, reject };
}

const promiseConstructor = Promise as unknown as { withResolvers?: unknown };
if (typeof promiseConstructor.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', { value: withResolvers, writable: true, configurable: true });
}
