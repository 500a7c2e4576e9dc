// Debian's chromium driven by playwright-core, for the dashboard's browser tests and screenshots:
// headless, no network of its own (no sync, updates or background fetches), a fresh profile each run.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Installed by `.ci/run` (apt-get install chromium) when missing. */
export const CHROMIUM_PATH = process.env.SVC_CHROMIUM_PATH ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface WatchedPage {
  page: Page;
  /** Console errors and uncaught exceptions of the page, in order. */
  errors: string[];
}

export interface TestBrowser {
  context: BrowserContext;
  /** A new tab whose console errors are collected; `width` x `height` (default 1280 x 900). */
  open(size?: { width: number; height: number }): Promise<WatchedPage>;
  close(): Promise<void>;
}

/** `javaScript: false` browses as an operator whose browser runs no script. */
export async function launchBrowser(options: { javaScript?: boolean } = {}): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'svc-chromium-'));
  let context: BrowserContext;
  try {
    // launchPersistentContext passes the fresh profile as --user-data-dir.
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: FLAGS,
      timeout: 30_000,
      javaScriptEnabled: options.javaScript ?? true,
    });
  } catch (error) {
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
  context.setDefaultTimeout(10_000);
  return {
    context,
    async open(size = { width: 1280, height: 900 }) {
      const page = await context.newPage();
      await page.setViewportSize(size);
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
      return { page, errors };
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Logs in through the login form as an operator would, and waits for the requested view. */
export async function logIn(page: Page, adminUrl: string, token: string, view = ''): Promise<void> {
  await page.goto(`${adminUrl}/dashboard/${view}`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL(`${adminUrl}/dashboard/${view}`);
}
