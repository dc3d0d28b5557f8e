/** Raised when an encoded histogram or snapshot field cannot be read (corrupt, truncated, or not HDR V2). */
export class MetricsDecodeError extends Error {
  override readonly name = 'MetricsDecodeError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Raised when a caller passes arguments that break an invariant (bad capacity, key group out of range, …). */
export class MetricsArgumentError extends Error {
  override readonly name = 'MetricsArgumentError';
}

/** Raised when an object is used outside its lifecycle (e.g. a LatencyRecorder after `destroy()`). */
export class MetricsUsageError extends Error {
  override readonly name = 'MetricsUsageError';
}
