import { BadRequestException, HttpException, InternalServerErrorException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { DatabaseUnavailableError } from '@weir/db';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseInput } from '../validation/parse-input';
import { InvalidRequestProblem, NotFoundProblem } from './problem.exception';
import { PROBLEM_TYPES } from './problem-details';
import { toProblem } from './to-problem';

describe('toProblem', () => {
  it('keeps a validation problem with every parameter named', () => {
    const error = new InvalidRequestProblem([
      { in: 'query', name: 'limit', reason: 'must be an integer from 1 to 200' },
      { in: 'query', name: 'cursor', reason: 'is not a cursor returned by this API' },
    ]);
    const { problem, unexpected } = toProblem(error, '/v1/workers', 'req-1');
    expect(unexpected).toBe(false);
    expect(problem).toMatchObject({ type: PROBLEM_TYPES.invalidRequest, status: 400, instance: '/v1/workers', requestId: 'req-1' });
    expect(problem.detail).toContain("'limit'");
    expect(problem.detail).toContain("'cursor'");
    expect(problem.errors).toHaveLength(2);
  });

  it('maps a missing resource to 404 with the id in the detail', () => {
    const { problem } = toProblem(new NotFoundProblem('worker', 'w-9'), '/v1/workers/w-9', undefined);
    expect(problem).toMatchObject({ status: 404, type: PROBLEM_TYPES.notFound, detail: 'worker "w-9" does not exist' });
    expect(problem).not.toHaveProperty('requestId');
  });

  it("keeps Nest's own 4xx messages (unknown route, body too large)", () => {
    expect(toProblem(new NotFoundException('Cannot GET /x'), '/x', 'r').problem).toMatchObject({
      status: 404,
      title: 'Not Found',
      detail: 'Cannot GET /x',
    });
    expect(toProblem(new PayloadTooLargeException(), '/x', 'r').problem).toMatchObject({ status: 413, title: 'Payload Too Large' });
    expect(toProblem(new BadRequestException(['a is bad', 'b is bad']), '/x', 'r').problem.detail).toBe('a is bad; b is bad');
  });

  it("keeps Fastify's own rejections (FST_ codes, 4xx) and nothing else that merely carries a status code", () => {
    const unsupported = Object.assign(new Error('Unsupported Media Type: application/xml'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' });
    expect(toProblem(unsupported, '/v1/slos', 'r')).toMatchObject({
      unexpected: false,
      problem: { status: 415, title: 'Unsupported Media Type', detail: expect.stringMatching(/^Unsupported Media Type: application\/xml: send JSON \(Content-Type: application\/json\)/) },
    });
    // As Nest hands it over: wrapped in an HttpException, the original as its cause.
    const wrapped = new HttpException('Unsupported Media Type', 415, { cause: Object.assign(new Error('Unsupported Media Type'), { statusCode: 415, code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' }) });
    expect(toProblem(wrapped, '/v1/slos', 'r').problem.detail).toBe('Unsupported Media Type: send JSON (Content-Type: application/json), or multipart/form-data to upload a bundle');
    const library = Object.assign(new Error('upstream said 404 for s3://bucket/secret-key'), { statusCode: 404 });
    expect(toProblem(library, '/v1/bundles', 'r')).toMatchObject({ unexpected: true, problem: { status: 500 } });
    const serverSide = Object.assign(new Error('plugin timeout'), { statusCode: 500, code: 'FST_ERR_PLUGIN_TIMEOUT' });
    expect(toProblem(serverSide, '/x', 'r')).toMatchObject({ unexpected: true, problem: { status: 500 } });
  });

  it('hides everything about unexpected errors, including 5xx HttpExceptions', () => {
    for (const error of [new Error('password=hunter2 at db.ts:12'), new InternalServerErrorException('internal detail'), 'a string']) {
      const { problem, unexpected } = toProblem(error, '/v1/workers', 'req-2');
      expect(unexpected).toBe(true);
      expect(problem.status).toBe(500);
      expect(JSON.stringify(problem)).not.toMatch(/hunter2|internal detail|a string|stack/);
      expect(problem.requestId).toBe('req-2');
    }
  });
});

describe('toProblem for unavailable dependencies', () => {
  it('answers 503 without the driver message', () => {
    const error = new DatabaseUnavailableError('list workers: database unavailable (connect ECONNREFUSED 10.0.0.5:5432)');
    const { problem, unexpected } = toProblem(error, '/v1/workers', 'r');
    expect(unexpected).toBe(true);
    expect(problem).toMatchObject({ status: 503, type: PROBLEM_TYPES.unavailable });
    expect(problem.detail).not.toContain('10.0.0.5');
  });
});

describe('parseInput', () => {
  const schema = z.strictObject({ limit: z.string().regex(/^\d+$/, 'must be digits').optional() });

  it('returns the parsed value', () => {
    expect(parseInput(schema, { limit: '5' }, 'query')).toEqual({ limit: '5' });
  });

  it('names the offending and the unknown parameters', () => {
    try {
      parseInput(schema, { limit: 'x', lmit: '5' }, 'query');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidRequestProblem);
      const problem = toProblem(err, '/', undefined).problem;
      expect(problem.errors).toEqual(
        expect.arrayContaining([
          { in: 'query', name: 'limit', reason: 'must be digits' },
          { in: 'query', name: 'lmit', reason: 'is not a recognised parameter' },
        ]),
      );
    }
  });
});
