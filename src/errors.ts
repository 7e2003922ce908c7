/**
 * A mistake of the user's (bad path, bad option, existing output): the CLI prints the message
 * as one line and exits 1, with no stack trace.
 */
export class UserError extends Error {
  override readonly name = 'UserError';
}

/** Thrown when a build is cancelled through its AbortSignal. */
export class AbortError extends Error {
  override readonly name = 'AbortError';
  constructor(message = 'the build was aborted') {
    super(message);
  }
}
