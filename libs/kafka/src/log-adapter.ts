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

/**
 * kafkajs logs every error response at ERROR, including the ones it then retries (coordinator loading, leader moving,
 * a concurrent transaction still ending). Whatever is not retried reaches the caller as a typed error, so these are
 * debug detail.
 */
function isRetriedResponse(namespace: string, message: string, extra: Record<string, unknown>): boolean {
  if (namespace === 'Connection') return message.startsWith('Response ');
  return namespace === 'Producer' && message.startsWith('Failed to send messages') && 'retryCount' in extra;
}

/** Routes kafkajs's log entries into a Weir sink; kafkajs filters by its own level before calling us. */
export function kafkajsLogCreator(sink: KafkaLogSink, clientId: string, threshold: KafkaLogLevel = 'warn'): logCreator {
  const debugWanted = threshold === 'debug';
  return () =>
    ({ namespace, level, log }) => {
      const { message, timestamp: _timestamp, ...extra } = log;
      if (isRetriedResponse(namespace, message, extra)) {
        if (debugWanted) sink('debug', message, { lib: 'kafkajs', clientId, namespace, ...extra });
        return;
      }
      sink(fromKafkajs(level), message, { lib: 'kafkajs', clientId, namespace, ...extra });
    };
}
