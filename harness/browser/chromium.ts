// Headless Chromium for driving n8n's editor: the system's browser (Debian's `chromium` package; another
// one with CHROMIUM_PATH), quiet and offline apart from the pages it is sent to, with a fresh profile that
// is deleted on close.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium, type BrowserContext } from 'playwright-core';

const DEFAULT_CHROMIUM = '/usr/bin/chromium';

const QUIET_FLAGS = [
	'--no-sandbox', // runs as root in CI containers
	'--disable-gpu',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-quic',
	'--disable-sync',
	'--no-first-run',
];

export interface HeadlessChromium {
	context: BrowserContext;
	close(): Promise<void>;
}

export async function launchChromium({
	width = 1600,
	height = 1000,
}: { width?: number; height?: number } = {}): Promise<HeadlessChromium> {
	const executablePath = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM;
	if (!existsSync(executablePath))
		throw new Error(
			`no Chromium at ${executablePath}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`,
		);
	const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
	try {
		const context = await chromium.launchPersistentContext(profile, {
			executablePath,
			headless: true,
			args: QUIET_FLAGS,
			viewport: { width, height },
			deviceScaleFactor: 1,
			colorScheme: 'light',
		});
		return {
			context,
			close: async () => {
				await context.close().catch(() => undefined);
				rmSync(profile, { recursive: true, force: true });
			},
		};
	} catch (error) {
		rmSync(profile, { recursive: true, force: true });
		throw error;
	}
}
