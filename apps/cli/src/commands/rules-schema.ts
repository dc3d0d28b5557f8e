import { fraudRulesSchema } from '../../../../examples/fraud-detection';
import { type Command, EXIT, optionalNumber } from '../command';

/** `weir rules schema`: prints the rules JSON Schema a fraud-detection bundle declares in its manifest. */
export const rulesSchemaCommand: Command = {
  path: ['rules', 'schema'],
  summary: "print the fraud-detection job's rules JSON Schema (for a bundle manifest's rulesSchema)",
  usage: '[--max-window-ms N]',
  options: { 'max-window-ms': { type: 'string' } },
  async run({ values }, io) {
    const maxWindowMs = optionalNumber(values, 'max-window-ms', (n) => Number.isInteger(n) && n > 0, 'a positive integer');
    io.out(JSON.stringify(fraudRulesSchema(maxWindowMs), null, 2));
    return EXIT.ok;
  },
};
