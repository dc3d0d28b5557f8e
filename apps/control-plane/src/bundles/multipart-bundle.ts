import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { InvalidRequestProblem } from '../problems/problem.exception';

/** The manifest field's own limit: schemas are small; anything bigger is a mistake or an attack. */
export const MAX_MANIFEST_BYTES = 256 * 1024;

export interface BundleParts<M, R> {
  readonly manifest: M;
  readonly stored: R;
}

export interface BundlePartHandlers<M, R> {
  /** Parses and validates the manifest field; throws a problem to refuse the upload before any byte is stored. */
  parseManifest(raw: string): M;
  /**
   * Consumes the bundle part (streamed, never buffered whole). Must stop when `signal` aborts and must clean up
   * whatever it stored before its promise settles with an error.
   */
  storeFile(file: Readable, manifest: M, signal: AbortSignal): Promise<R>;
}

const invalid = (name: string, reason: string, where: 'body' | 'header' = 'body') => new InvalidRequestProblem([{ in: where, name, reason }]);
const TWO_PARTS = 'must be multipart/form-data with exactly two parts: the manifest field, then the bundle file';

/**
 * Reads `multipart/form-data` with a `manifest` field followed by a `bundle` file part. The manifest is validated
 * as soon as it arrives; the file is handed to `storeFile` as a stream. On any failure (malformed body, a part
 * missing, extra or out of order, an invalid manifest, storeFile failing, the client going away) parsing stops, the
 * store is aborted, and the promise rejects only once storeFile has cleaned up, so nothing is left behind.
 * The rest of the request body is discarded.
 */
export function receiveBundleParts<M, R>(req: IncomingMessage, handlers: BundlePartHandlers<M, R>): Promise<BundleParts<M, R>> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // Two of each, so that a stray or repeated part reaches the handlers below and is named in the problem.
        limits: { fields: 2, files: 2, fieldSize: MAX_MANIFEST_BYTES, fieldNameSize: 64, headerPairs: 20 },
      });
    } catch {
      reject(invalid('Content-Type', 'must be multipart/form-data with a boundary', 'header'));
      req.resume();
      return;
    }
    const abort = new AbortController();
    let manifest: M | undefined;
    let storing: Promise<R> | undefined;
    let settled = false;

    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      abort.abort(err);
      req.unpipe(parser);
      req.resume();
      void (storing ?? Promise.resolve()).catch(() => undefined).then(() => reject(err));
    };

    parser.on('field', (name, value, info) => {
      if (settled) return;
      if (name !== 'manifest') return fail(invalid(name, `is not a recognised part: ${TWO_PARTS}`));
      if (manifest !== undefined) return fail(invalid('manifest', 'must appear once'));
      if (info.valueTruncated) return fail(invalid('manifest', `must be at most ${MAX_MANIFEST_BYTES} bytes`));
      try {
        manifest = handlers.parseManifest(value);
      } catch (err) {
        fail(err);
      }
    });
    parser.on('file', (name, file, _info) => {
      if (settled || name !== 'bundle' || manifest === undefined || storing) {
        file.resume();
        if (name !== 'bundle') return fail(invalid(name, `is not a recognised part: ${TWO_PARTS}`));
        if (storing) return fail(invalid('bundle', 'must appear once'));
        return fail(invalid('manifest', 'must come before the bundle part'));
      }
      // A truncated body errors both the file stream and the parser; the parser's 'error' reports it.
      file.on('error', () => undefined);
      storing = handlers.storeFile(file, manifest, abort.signal);
      storing.catch(fail);
    });
    for (const limit of ['filesLimit', 'fieldsLimit'] as const) parser.on(limit, () => fail(invalid('body', TWO_PARTS)));
    parser.on('error', () => fail(invalid('body', 'is not well-formed multipart/form-data')));
    parser.on('close', () => {
      if (settled) return;
      if (manifest === undefined) return fail(invalid('manifest', 'is required: a JSON field before the bundle part'));
      if (!storing) return fail(invalid('bundle', 'is required: the bundle file part after the manifest'));
      const stored = storing;
      stored.then(
        (value) => {
          if (settled) return;
          settled = true;
          resolve({ manifest: manifest as M, stored: value });
        },
        (err: unknown) => fail(err),
      );
    });
    req.on('close', () => {
      if (!req.complete) fail(new ClientGoneError());
    });
    req.pipe(parser);
  });
}

/** The client closed the connection mid-upload; there is nobody to answer. */
export class ClientGoneError extends Error {
  override readonly name = 'ClientGoneError';
  constructor() {
    super('the client closed the connection during the upload');
  }
}
