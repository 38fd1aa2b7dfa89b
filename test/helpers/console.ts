import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';

/** Where a run saves each main page's screenshot for review (CONSOLE_SCREENSHOTS, else the test's temporary folder). */
export const shotsDir = (fallback: string) => process.env.CONSOLE_SCREENSHOTS ?? fallback;

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/**
 * Opens the console in a new context and signs in by the fields' labels. The context bypasses the page's CSP only so
 * that a test can inject axe-core (the console itself never needs it); the clipboard is granted for "Copy" buttons.
 */
export async function signIn(browser: Browser, baseUrl: string, tenantId: string, key: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, bypassCSP: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
  const page = await context.newPage();
  await page.goto(`${baseUrl}/console`);
  await page.getByLabel('Tenant ID').fill(tenantId);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.locator('#nav').isVisible(), { timeout: 30_000 }).toBe(true);
  return page;
}

/**
 * axe-core's WCAG 2.x A and AA rules on the page as it is now: answers the serious and critical violations, each as
 * "rule: target" lines (empty when none).
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  const violations: { id: string; impact: string; targets: string[] }[] = await page.evaluate(async () => {
    const axe = (window as any).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n: any) => n.target.join(' ')) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.targets.join(', ')}`);
}

/** At a phone's width the page fits: nothing scrolls sideways. The viewport is put back for the next steps. */
export async function atPhoneWidth(page: Page, path: string) {
  const before = page.viewportSize()!;
  await page.setViewportSize({ width: 390, height: 844 });
  const fit = await page.evaluate(() => ({
    width: document.documentElement.scrollWidth,
    // What sticks out, for the failure message.
    wider: [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > 390)
      .slice(0, 5)
      .map(
        (e) =>
          `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className ? `.${String(e.className).split(' ').join('.')}` : ''} to ${Math.round(e.getBoundingClientRect().right)}`,
      ),
  }));
  expect(fit.width, fit.wider.join(', ')).toBeLessThanOrEqual(390);
  await page.screenshot({ path, fullPage: true });
  await page.setViewportSize(before);
}

/** A screenshot of the whole page, and its accessibility check (no serious or critical violation). */
export async function reviewScreen(page: Page, dir: string, name: string) {
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
  expect(await accessibilityViolations(page), name).toEqual([]);
}

/**
 * How many pixels of a chart's canvas (charts.js draws with uPlot) are the console's accent colour, the colour of its
 * lines and dots: 0 until the chart is drawn, and then about the line's length times its width.
 */
export async function chartInk(figure: Locator): Promise<number> {
  if ((await figure.locator('canvas').count()) === 0) return 0;
  return figure.locator('canvas').evaluate((canvas: HTMLCanvasElement) => {
    const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
    let ink = 0;
    // #2459d6, give or take the anti-aliasing.
    for (let i = 0; i < data.length; i += 4)
      if (Math.abs(data[i]! - 0x24) < 48 && Math.abs(data[i + 1]! - 0x59) < 48 && Math.abs(data[i + 2]! - 0xd6) < 48 && data[i + 3]! > 128) ink++;
    return ink;
  });
}
