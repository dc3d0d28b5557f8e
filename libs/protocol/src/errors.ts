/** A message did not match its schema: a bug or a version mismatch on the sending side, never worth a retry. */
export class ProtocolValidationError extends Error {
  override readonly name = 'ProtocolValidationError';
  constructor(message: string, readonly issues: readonly { path: string; message: string }[]) {
    super(message);
  }
}

/**
 * Thrown by a command handler when the command can never succeed on this worker (an unknown bundle, a bad
 * assignment): the command fails at once instead of being retried.
 */
export class CommandRejectedError extends Error {
  override readonly name = 'CommandRejectedError';
}

/** Redis did not take a message within the allowed time. */
export class ProtocolTimeoutError extends Error {
  override readonly name = 'ProtocolTimeoutError';
}
