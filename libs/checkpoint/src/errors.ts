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
  override readonly name = 'InvalidCheckpointError';
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
