// Errors the background refresher raises. Refresh failures on the way (origin errors, unstorable
// answers) are never thrown: they are counted in svc_refresh_errors_total. These are programmer or
// configuration errors, thrown at construction with a precise message.

export type RefreshOptionCode = 'invalid_option'; // a refresher option is out of range

export class RefreshOptionError extends Error {
  override readonly name = 'RefreshOptionError';
  readonly code: RefreshOptionCode = 'invalid_option';
}

/** Throws unless `value` is a finite number within [min, max]; `name` is the option's name. */
export function requireInRange(name: string, value: number, min: number, max: number): number {
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new RefreshOptionError(`refresher option ${name} must be within [${min}, ${max}], got ${value}`);
  }
  return value;
}
