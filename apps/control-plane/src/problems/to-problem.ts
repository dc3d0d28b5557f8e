import { STATUS_CODES } from 'node:http';
import { HttpException } from '@nestjs/common';
import { DatabaseUnavailableError } from '@weir/db';
import { PROBLEM_TYPES, type ProblemDetails } from './problem-details';
import { ProblemException } from './problem.exception';

export interface MappedProblem {
  readonly problem: ProblemDetails;
  /** True when the caller gets a generic message: the real error must be logged server-side. */
  readonly unexpected: boolean;
  /** Headers to send with it (a ProblemException's own, e.g. Retry-After). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Maps anything thrown while serving a request to what the caller sees. Caller mistakes keep their message;
 * unexpected errors keep nothing (no message, no stack): those may reveal internals.
 */
export function toProblem(error: unknown, instance: string, requestId: string | undefined): MappedProblem {
  const common = { instance, ...(requestId ? { requestId } : {}) };
  if (error instanceof ProblemException) {
    return {
      unexpected: false,
      ...(error.headers ? { headers: error.headers } : {}),
      problem: {
        type: error.type,
        title: error.title,
        status: error.status,
        detail: error.detail,
        ...common,
        ...(error.errors ? { errors: error.errors } : {}),
      },
    };
  }
  // Nest hands Fastify's own rejections over wrapped in an HttpException, the original as its cause.
  const rejected = fastifyRejection(error instanceof HttpException ? error.cause : error);
  if (rejected) {
    return {
      unexpected: false,
      problem: { type: 'about:blank', title: STATUS_CODES[rejected.status] ?? 'Error', status: rejected.status, detail: rejected.detail, ...common },
    };
  }
  if (error instanceof HttpException && error.getStatus() < 500) {
    const status = error.getStatus();
    return {
      unexpected: false,
      problem: {
        type: status === 404 ? PROBLEM_TYPES.notFound : 'about:blank',
        title: STATUS_CODES[status] ?? 'Error',
        status,
        detail: httpExceptionDetail(error),
        ...common,
      },
    };
  }
  if (error instanceof DatabaseUnavailableError) {
    // Not the caller's fault and likely to pass: 503 tells clients and load balancers to retry.
    return {
      unexpected: true,
      problem: {
        type: PROBLEM_TYPES.unavailable,
        title: 'Service Unavailable',
        status: 503,
        detail: 'A service the control plane depends on is unavailable. Retry later; quote the request id if it persists.',
        ...common,
      },
    };
  }
  return {
    unexpected: true,
    problem: {
      type: PROBLEM_TYPES.internal,
      title: 'Internal Server Error',
      status: 500,
      detail: 'An unexpected error occurred. Quote the request id when reporting it.',
      ...common,
    },
  };
}

/** Nest's built-in 4xx (unknown route, body too large, malformed JSON) carry a safe, short message. */
function httpExceptionDetail(error: HttpException): string {
  const response = error.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.map(String).join('; ');
  return typeof message === 'string' ? message : error.message;
}

/** What to do about a rejection whose own message only names it. */
const REJECTION_HINTS: Readonly<Record<string, string>> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'send JSON (Content-Type: application/json), or multipart/form-data to upload a bundle',
  FST_ERR_CTP_BODY_TOO_LARGE: 'JSON bodies are limited to 1 MiB (bundles are uploaded as multipart/form-data)',
};

/**
 * What Fastify refuses before a handler runs (malformed JSON, a body too large, an unsupported content type): a 4xx
 * `statusCode` and an `FST_` code, with a message that says what was wrong and nothing of the server.
 */
function fastifyRejection(error: unknown): { status: number; detail: string } | undefined {
  if (!(error instanceof Error)) return undefined;
  const { statusCode, code } = error as Error & { statusCode?: unknown; code?: unknown };
  if (typeof code !== 'string' || !code.startsWith('FST_')) return undefined;
  if (typeof statusCode !== 'number' || statusCode < 400 || statusCode >= 500) return undefined;
  const hint = REJECTION_HINTS[code];
  return { status: statusCode, detail: hint ? `${error.message}: ${hint}` : error.message };
}
