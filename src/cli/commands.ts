import type { CAC } from 'cac';
import { registerExport } from './export.js';
import { registerSchema } from './schema.js';

/** Every command the binary offers; one module per command. */
export function registerCommands(cli: CAC): void {
  registerExport(cli);
  registerSchema(cli);
}
