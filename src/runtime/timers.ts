// The one way the refresher and the CDN purge queue wait: a function that arms a timer and answers how
// to cancel it. The real one is Node's setTimeout; tests pass one they fire by hand, with the clock
// they move.

export type CancelTimer = () => void;
export type SetTimer = (callback: () => void, delayMs: number) => CancelTimer;

export const realSetTimer: SetTimer = (callback, delayMs) => {
  const handle = setTimeout(callback, delayMs);
  // A pending refresh or persist must never keep the process alive on its own.
  handle.unref();
  return () => clearTimeout(handle);
};
