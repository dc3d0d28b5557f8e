/** A state reference that cannot be encoded: key group out of range or namespace too long. Always an engine bug. */
export class InvalidStateRefError extends Error {
  override readonly name = 'InvalidStateRefError';
}

/** A key-group snapshot image that is corrupt, of an unknown format version, or of another key group. */
export class StateImageError extends Error {
  override readonly name = 'StateImageError';
}

/** A stored value whose envelope this version cannot read (written by a newer Weir, or corrupt). */
export class StateValueFormatError extends Error {
  override readonly name = 'StateValueFormatError';
}

/** An operation on a backend after `close()`. */
export class StateBackendClosedError extends Error {
  override readonly name = 'StateBackendClosedError';
}

/** createStateBackend options that cannot work (no path for the LSM backend, a negative cache size). */
export class StateBackendConfigError extends Error {
  override readonly name = 'StateBackendConfigError';
}

/** A local checkpoint that cannot be taken or opened: missing or corrupt files, a directory already in use. */
export class StateCheckpointError extends Error {
  override readonly name = 'StateCheckpointError';
}
