// An answer other than success, thrown by the operations and route(); server.ts sends it as a problem (status, code).

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(code);
  }
}
