/** A checkpoint file whose bytes are not what the manifest says (truncated, corrupt) or that is gone. */
export class CorruptCheckpointError extends Error {
  override readonly name: string = 'CorruptCheckpointError';
  constructor(
    /** `checkpoint 42` or `savepoint before-upgrade`. */
    readonly checkpoint: string,
    /** The file as the manifest names it: `operator/subtask/name`. */
    readonly file: string,
    /** The object key on S3. */
    readonly key: string,
    readonly reason: string,
    options: { cause?: unknown } = {},
  ) {
    super(`${checkpoint}: file ${file} (${key}) ${reason}`, options);
  }
}

/** A file the manifest names that is not on S3 (deleted, or never uploaded). */
export class MissingCheckpointFileError extends CorruptCheckpointError {
  override readonly name = 'MissingCheckpointFileError';
}

/** A manifest that is not valid JSON, does not match the format, or has a newer format version. */
export class ManifestFormatError extends Error {
  override readonly name: string = 'ManifestFormatError';
}

export class ManifestVersionError extends ManifestFormatError {
  override readonly name = 'ManifestVersionError';
}

export class CheckpointNotFoundError extends Error {
  override readonly name = 'CheckpointNotFoundError';
}

/** Arguments that cannot make a checkpoint: duplicate parts, bad ids, overlapping key groups. */
export class InvalidCheckpointError extends Error {
  override readonly name: string = 'InvalidCheckpointError';
}

/**
 * A part reuses a stored file that the base checkpoint (the latest completed one) does not reference: someone else
 * wrote a newer checkpoint, or the caller's chain is stale. Retention protects only the base of a write in
 * progress, so the file may be gone: the caller must hand over the bytes again (a full image).
 */
export class StaleReuseError extends InvalidCheckpointError {
  override readonly name = 'StaleReuseError';
}

/** A write given up by its caller (a checkpoint timeout): no manifest was written, and none will be. */
export class CheckpointAbortedError extends Error {
  override readonly name = 'CheckpointAbortedError';
}

/** No retained checkpoint could be restored; `attempts` says why each one was skipped. */
export class NoUsableCheckpointError extends Error {
  override readonly name = 'NoUsableCheckpointError';
  constructor(
    message: string,
    readonly attempts: readonly { readonly checkpointId: number; readonly reason: string }[],
  ) {
    super(message);
  }
}
