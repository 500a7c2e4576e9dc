// Every admin API failure is one JSON shape, `{"error":{"code","message"}}`, with a stable `code`
// per condition and the HTTP status that condition calls for.

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra response header fields the condition requires (Allow on 405, WWW-Authenticate on 401). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): { error: { code: string; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}
