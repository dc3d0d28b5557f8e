/** Injection tokens of the side-effect clients; the rest of the app depends on these, never on the libraries. */
export const PG_POOL = Symbol('PG_POOL');
export const REDIS = Symbol('REDIS');
export const BLOB_STORE = Symbol('BLOB_STORE');
export const KAFKA_ADMIN = Symbol('KAFKA_ADMIN');
