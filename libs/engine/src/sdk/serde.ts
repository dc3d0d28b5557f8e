/** How record values become bytes (Kafka, the Kafka exchange, dead letters) and back. */
export interface Serde<T> {
  readonly name: string;
  encode(value: T): Buffer;
  /** Throws on undecodable input; the runtime sends such records to the dead-letter topic. */
  decode(bytes: Buffer): T;
}

export class DecodeError extends Error {
  override readonly name = 'DecodeError';
}

export function json<T>(): Serde<T> {
  return {
    name: 'json',
    encode: (value) => Buffer.from(JSON.stringify(value), 'utf8'),
    decode: (bytes) => {
      try {
        return JSON.parse(bytes.toString('utf8')) as T;
      } catch (err) {
        throw new DecodeError(`invalid JSON: ${(err as Error).message}`);
      }
    },
  };
}

export function string(): Serde<string> {
  return { name: 'string', encode: (value) => Buffer.from(value, 'utf8'), decode: (bytes) => bytes.toString('utf8') };
}

export function raw(): Serde<Buffer> {
  return { name: 'raw', encode: (value) => value, decode: (bytes) => bytes };
}
