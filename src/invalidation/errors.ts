// Errors the invalidation engine raises, one class per condition, each with a stable `code` the admin
// API maps to a status (400 for InvalidBanError and InvalidUrlError, 429 for BanLimitError).

export type InvalidBanCode =
  | 'empty_ban' // no field of the predicate is non-empty (spec §2.1)
  | 'invalid_regex' // host_regex or path_regex is not a valid RE2 expression
  | 'field_too_long'; // a regex above MAX_BAN_REGEX_BYTES, a surrogate key above MAX_TAG_LENGTH

/** A ban request that cannot become a ban; nothing was changed. */
export class InvalidBanError extends Error {
  override readonly name = 'InvalidBanError';
  constructor(
    readonly code: InvalidBanCode,
    message: string,
    /** The offending field for `invalid_regex` and `field_too_long`. */
    readonly field?: 'host_regex' | 'path_regex' | 'surrogate_key',
  ) {
    super(message);
  }
}

/**
 * A new ban was refused because `max_active_bans` are in force; nothing was changed. A ban leaves
 * the list when it is pruned, 24 hours after its creation.
 */
export class BanLimitError extends Error {
  override readonly name = 'BanLimitError';
  readonly code = 'ban_limit_reached';
  constructor(
    readonly limit: number,
    /** When the oldest active ban expires, ms since the epoch: the earliest a new ban can fit. */
    readonly oldestExpiresMs: number,
    /** How long until then, by the engine's clock (0 when it has expired and awaits its prune). */
    readonly retryAfterMs: number,
  ) {
    super(`${limit} bans are active, the most max_active_bans allows; the oldest expires at ${new Date(oldestExpiresMs).toISOString()}`);
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
