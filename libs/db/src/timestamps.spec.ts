import { types } from 'pg';
import { describe, expect, it } from 'vitest';
import { parseTimestamptz } from './timestamps';

const generic = types.getTypeParser(1184, 'text') as (text: string) => unknown;

describe('parseTimestamptz', () => {
  it('gives what the generic parser gives, for the common shape and everything else', () => {
    const samples = [
      '2026-11-29 13:09:20.699123+00', '2026-11-29 13:09:20+00', '2026-11-29 13:09:20.5+00', '2026-11-29 13:09:20.289+00',
      '1999-12-31 23:59:59.999999+00', '2024-02-29 00:00:00.000001+00', '2026-11-29 13:09:20.699123+05:30',
      '2026-11-29 13:09:20-08', '1890-01-01 00:00:00+00:17:30', '2026-11-29 13:09:20.1-03:30', '0099-01-01 00:00:00+00',
      '0044-03-15 12:00:00+00 BC', '12345-01-01 00:00:00+00', 'infinity', '-infinity', '2026-11-29 13:09:20.+00',
      '2026-11-29T13:09:20Z', '2026-11-29 13:09:20+0', '2026-11-29 13:09:20+00:', '2026-11-29 13:09:20+00:30:1',
    ];
    for (const text of samples) expect([text, parseTimestamptz(text)]).toEqual([text, generic(text)]);
  });

  it('agrees with the generic parser on random instants and offsets', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const two = (x: number) => String(x).padStart(2, '0');
    for (let i = 0; i < 2_000; i++) {
      const d = new Date(Date.UTC(1000 + Math.floor(random() * 9000), 0, 1) + Math.floor(random() * 365 * 86_400_000));
      const fraction = random() < 0.2 ? '' : `.${String(Math.floor(random() * 1e6)).padStart(6, '0').slice(0, 1 + Math.floor(random() * 6))}`;
      const offset = random() < 0.5 ? '+00' : `${random() < 0.5 ? '+' : '-'}${two(Math.floor(random() * 15))}${random() < 0.5 ? '' : `:${two(Math.floor(random() * 60))}`}`;
      const text = `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}${fraction}${offset}`;
      expect([text, (parseTimestamptz(text) as Date).getTime()]).toEqual([text, (generic(text) as Date).getTime()]);
    }
  });
});
