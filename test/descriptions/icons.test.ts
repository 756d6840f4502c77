/**
 * n8n resolves a `file:` icon relative to the compiled node or credential file in dist/, so every icon the
 * package names must be copied there by the build. Each node and the credential has its own light and
 * dark icon, drawn with shapes: SVG text renders in whatever font the browser has and reads as a speck.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { loadFromSource, manifest } from '../support/packageSources';
import { REPO_ROOT as REPO } from '../../harness/repo';

type ThemedIcon = { light: string; dark: string };

/** The icon a node or credential class declares, with the path of its compiled file. */
function declaredIcon(distPath: string): { distPath: string; icon: ThemedIcon } {
	const instance = loadFromSource<{ icon?: ThemedIcon; description?: { icon?: ThemedIcon } }>(
		distPath,
	);
	const icon = instance.description?.icon ?? instance.icon;
	if (!icon || typeof icon !== 'object') throw new Error(`${distPath} declares no light/dark icon`);
	return { distPath, icon };
}

const declared = [...manifest.n8n.nodes, ...manifest.n8n.credentials].map(declaredIcon);
const iconFiles = declared.flatMap(({ distPath, icon }) =>
	[icon.light, icon.dark].map((file) => join(REPO, dirname(distPath), file.replace(/^file:/, ''))),
);

// An icon an earlier build copied under a name the sources no longer have.
const staleIcon = join(REPO, 'dist', 'nodes', 'Idempotency', 'renamedAway.svg');

beforeAll(() => {
	mkdirSync(dirname(staleIcon), { recursive: true });
	writeFileSync(staleIcon, '<svg xmlns="http://www.w3.org/2000/svg"/>');
	// The copy step of `npm run build`, so the test checks what a build really puts in dist/.
	execFileSync(join(REPO, 'node_modules', '.bin', 'gulp'), ['build:assets'], {
		cwd: REPO,
		stdio: 'pipe',
	});
}, 60_000);

it('gives each node and the credential an icon of its own, different in light and dark', () => {
	const lights = declared.map(({ icon }) => icon.light);
	expect(new Set(lights).size).toBe(declared.length);
	for (const { icon } of declared) expect(icon.dark).not.toBe(icon.light);
});

const iconFilesByName = iconFiles.map((file) => [file.slice(REPO.length + 1), file]);

it.each(iconFilesByName)('%s is in dist after the build', (_name, file) => {
	expect(existsSync(file)).toBe(true);
});

it.each(iconFilesByName)('%s is an SVG drawn without text', (_name, file) => {
	const svg = readFileSync(file, 'utf8');
	expect(svg).toMatch(/^<svg [^>]*viewBox="0 0 60 60"/);
	expect(svg).not.toMatch(/<text\b/);
});

it('removes icons an earlier build copied, so a renamed icon is not packed', () => {
	expect(existsSync(staleIcon)).toBe(false);
});
