// Errors a store raises to its owner. Request-path failures never surface as errors (they degrade to
// a miss); these are programmer errors at construction and a warm store that cannot be opened.

export type StoreErrorCode =
  | 'invalid_option' // a store option is out of range: a programmer or configuration error
  | 'open_failed' // the warm store's directory could not be opened as an lmdb environment
  | 'closed'; // the warm store was closed before its index was rebuilt

export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
