import { parseArgs } from 'node:util';
import { type CliIo, type Command, EXIT, UsageError } from './command';
import { generateTransactionsCommand } from './commands/generate-transactions';
import { rulesSchemaCommand } from './commands/rules-schema';
import { rulesValidateCommand } from './commands/rules-validate';

export const COMMANDS: readonly Command[] = [generateTransactionsCommand, rulesValidateCommand, rulesSchemaCommand];

/** Runs `weir <command> [options]` and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo, commands: readonly Command[] = COMMANDS): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    help(io.out, commands);
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  const command = commands.find((c) => c.path.every((word, i) => argv[i] === word));
  if (!command) {
    io.err(`weir: unknown command "${argv.slice(0, 2).join(' ')}"`);
    help(io.err, commands);
    return EXIT.usage;
  }
  const rest = argv.slice(command.path.length);
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(usageOf(command));
    return EXIT.ok;
  }
  try {
    const { values, positionals } = parseArgs({ args: [...rest], options: command.options, allowPositionals: true, strict: true });
    return await command.run({ values: values as Record<string, string | boolean | undefined>, positionals }, io);
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`weir ${command.path.join(' ')}: ${(err as Error).message}`);
      io.err(usageOf(command));
      return EXIT.usage;
    }
    io.err(`weir ${command.path.join(' ')}: ${(err as Error).name}: ${(err as Error).message}`);
    return EXIT.failed;
  }
}

function usageOf(c: Command): string {
  return `usage: weir ${c.path.join(' ')} ${c.usage}\n  ${c.summary}`;
}

function help(print: (line: string) => void, commands: readonly Command[]): void {
  print('usage: weir <command> [options]   (weir <command> --help for its options)');
  for (const c of commands) print(`  ${c.path.join(' ').padEnd(24)}${c.summary}`);
}
