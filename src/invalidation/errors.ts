// Errors the invalidation engine raises, one class per condition, each with a stable `code` the admin
// API maps to a status (400 for InvalidBanError and InvalidUrlError).

export type InvalidBanCode =
  | 'empty_ban' // no field of the predicate is non-empty (spec §2.1)
  | 'invalid_regex'; // host_regex or path_regex is not a valid RE2 expression

/** A ban request that cannot become a ban; nothing was changed. */
export class InvalidBanError extends Error {
  override readonly name = 'InvalidBanError';
  constructor(
    readonly code: InvalidBanCode,
    message: string,
    /** The offending field for `invalid_regex`. */
    readonly field?: 'host_regex' | 'path_regex',
  ) {
    super(message);
  }
}

/** A purge or refresh URL that is not an absolute http(s) URL with a host; nothing was changed. */
export class InvalidUrlError extends Error {
  override readonly name = 'InvalidUrlError';
  readonly code = 'invalid_url';
}

/** The invalidation journal holds a damaged record before its last line; the node must not start. */
export class CorruptJournalError extends Error {
  override readonly name = 'CorruptJournalError';
  readonly code = 'corrupt_journal';
}

/** An operation was called before start() or after stop(): a programmer error in the node's wiring. */
export class InvalidatorStateError extends Error {
  override readonly name = 'InvalidatorStateError';
  readonly code = 'not_running';
}
