// What the tenant's commands print: one JSON document on standard output with --json, text for a person otherwise;
// errors on standard error with the API's message, and a non-zero exit.
import { MediaplaneError, ProcessingFailedError } from '@mediaplane/sdk';

/** A mistake of the user's (no credentials, a bad option) that is told as it is, without a stack. */
export class CliError extends Error {}

export interface OutputOptions {
  json?: boolean;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value ?? null, null, 2)}\n`);
}

/** Runs a command's body; any error is told on standard error (and with --json as the API's error shape on stdout). */
export async function runCommand(opts: OutputOptions, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (e) {
    process.exitCode = 1;
    const { message, document } = describeError(e);
    if (opts.json) printJson(document);
    process.stderr.write(`${message}\n`);
  }
}

function describeError(e: unknown): { message: string; document: unknown } {
  if (e instanceof MediaplaneError) {
    const fields = e.errors.map((f) => `\n  ${f.field}: ${f.message}`).join('');
    const where = e.status ? ` (${e.code}, HTTP ${e.status}${e.requestId ? `, request ${e.requestId}` : ''})` : '';
    return {
      message: `Error: ${e.message}${where}${fields}`,
      document: { status: { code: e.code, status: e.status, message: e.message }, ...(e.errors.length ? { errors: e.errors } : {}) },
    };
  }
  if (e instanceof ProcessingFailedError) {
    return {
      message: `Error: the ${e.kind} ${e.id} failed: ${e.message}`,
      document: { status: { code: `${e.kind}_failed`, status: 0, message: e.message }, [e.kind]: e.resource },
    };
  }
  const message = e instanceof Error ? e.message : String(e);
  return { message: `Error: ${message}`, document: { status: { code: 'cli_error', status: 0, message } } };
}

/** Columns padded to their widest cell; the last one is not padded. */
export function table(header: string[], rows: (string | number | null | undefined)[][]): string {
  const cells = [header, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? '' : String(c))))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n');
}

export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const mm = String(m).padStart(h ? 2 : 1, '0');
  return `${h ? `${h}:` : ''}${mm}:${String(s % 60).padStart(2, '0')}`;
}
