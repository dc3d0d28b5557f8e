import { logLevel as KafkajsLevel, type logCreator } from 'kafkajs';
import type { KafkaLogLevel, KafkaLogSink } from './contract';

const toKafkajs: Record<KafkaLogLevel, KafkajsLevel> = {
  error: KafkajsLevel.ERROR,
  warn: KafkajsLevel.WARN,
  info: KafkajsLevel.INFO,
  debug: KafkajsLevel.DEBUG,
};

export function kafkajsLevel(level: KafkaLogLevel = 'warn'): KafkajsLevel {
  return toKafkajs[level];
}

function fromKafkajs(level: KafkajsLevel): KafkaLogLevel {
  if (level <= KafkajsLevel.ERROR) return 'error';
  if (level === KafkajsLevel.WARN) return 'warn';
  if (level === KafkajsLevel.INFO) return 'info';
  return 'debug';
}

/** One JSON line per entry on stderr, the shape pino writes, so the worker's log pipeline reads both alike. */
export const stderrSink: KafkaLogSink = (level, message, fields) => {
  process.stderr.write(`${JSON.stringify({ level, time: Date.now(), msg: message, ...fields })}\n`);
};

/** Routes kafkajs's log entries into a Weir sink; kafkajs filters by its own level before calling us. */
export function kafkajsLogCreator(sink: KafkaLogSink, clientId: string): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const { message, timestamp: _timestamp, ...extra } = log;
      sink(fromKafkajs(level), message, { lib: 'kafkajs', clientId, namespace, ...extra });
    };
}
