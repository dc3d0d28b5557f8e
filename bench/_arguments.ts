/** A bench's `--name value` options: the value after `--name`, or the fallback when it is not given. */
export function argument(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
}

/** The same for a number option. */
export function numberArgument(name: string, fallback: number): number {
  return Number(argument(name, String(fallback)));
}
