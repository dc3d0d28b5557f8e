/**
 * A strict reader of the Prometheus text exposition format (0.0.4), for specs: it throws on anything a Prometheus
 * server would reject (bad names, bad escapes, unparseable values, TYPE after samples, families split, duplicate
 * series) and returns the families it read.
 */
export interface ParsedSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface ParsedFamily {
  readonly name: string;
  help: string | null;
  type: string | null;
  readonly samples: ParsedSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheusText(text: string): Map<string, ParsedFamily> {
  if (text !== '' && !text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const families = new Map<string, ParsedFamily>();
  const seriesSeen = new Set<string>();
  let current: ParsedFamily | null = null;
  const familyFor = (name: string): ParsedFamily => {
    if (current?.name === name) return current;
    if (families.has(name)) throw new Error(`family ${name} is not contiguous`);
    current = { name, help: null, type: null, samples: [] };
    families.set(name, current);
    return current;
  };
  for (const line of text.split('\n').slice(0, -1)) {
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (match === null) continue; // a plain comment
      const [, keyword, name, rest] = match;
      if (!METRIC_NAME.test(name)) throw new Error(`bad metric name ${name}`);
      const family = familyFor(name);
      if (keyword === 'HELP') {
        if (family.help !== null) throw new Error(`second HELP for ${name}`);
        family.help = unescape(rest, false);
      } else {
        if (family.type !== null || family.samples.length > 0) throw new Error(`misplaced TYPE for ${name}`);
        if (!TYPES.has(rest)) throw new Error(`bad type ${rest}`);
        family.type = rest;
      }
      continue;
    }
    if (line.trim() === '') continue;
    const sample = parseSample(line);
    const family = familyFor(sample.name);
    const series = sample.name + JSON.stringify(Object.entries(sample.labels).sort());
    if (seriesSeen.has(series)) throw new Error(`duplicate series ${series}`);
    seriesSeen.add(series);
    family.samples.push(sample);
  }
  return families;
}

function parseSample(line: string): ParsedSample {
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (nameMatch === null) throw new Error(`bad sample line: ${line}`);
  const name = nameMatch[0];
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    while (line[i] !== '}') {
      const labelMatch = /^([^=]+)="/.exec(line.slice(i));
      if (labelMatch === null || !LABEL_NAME.test(labelMatch[1])) throw new Error(`bad label in: ${line}`);
      i += labelMatch[0].length;
      let raw = '';
      while (line[i] !== '"') {
        if (i >= line.length) throw new Error(`unterminated label value in: ${line}`);
        if (line[i] === '\\') {
          raw += line.slice(i, i + 2);
          i += 2;
        } else raw += line[i++];
      }
      i++;
      if (labelMatch[1] in labels) throw new Error(`repeated label ${labelMatch[1]}`);
      labels[labelMatch[1]] = unescape(raw, true);
      if (line[i] === ',') i++;
      else if (line[i] !== '}') throw new Error(`bad label separator in: ${line}`);
    }
    i++;
  }
  const rest = line.slice(i).split(' ');
  if (rest[0] !== '' || rest.length < 2 || rest.length > 3) throw new Error(`bad value part in: ${line}`);
  return { name, labels, value: parseValue(rest[1]) };
}

function parseValue(text: string): number {
  if (text === 'NaN') return Number.NaN;
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value ${text}`);
  return Number(text);
}

function unescape(text: string, quotes: boolean): string {
  return text.replace(/\\(.)/g, (_, escaped: string) => {
    if (escaped === 'n') return '\n';
    if (escaped === '\\') return '\\';
    if (escaped === '"' && quotes) return '"';
    throw new Error(`bad escape \\${escaped}`);
  });
}
