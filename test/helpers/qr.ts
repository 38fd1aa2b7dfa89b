import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * What a phone's camera reads of a QR code image: zbarimg (Debian's zbar-tools) decodes the file. QR codes only: with
 * every symbology on, zbarimg once also read a one-dimensional barcode ("D-0D") into a QR code's modules (CI).
 */
export async function readQrCode(file: string): Promise<string> {
  const { stdout } = await run('zbarimg', ['-Sdisable', '-Sqrcode.enable', '--raw', '-q', file]);
  return stdout.trim();
}
