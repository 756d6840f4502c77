import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT } from '../../harness/repo';

/** package.json: the package's name and the compiled node and credential files it lists for n8n. */
export const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
	name: string;
	n8n: { nodes: string[]; credentials: string[] };
};

/** The source file of a dist/ path the manifest lists, without its extension. */
export function sourceOf(distPath: string): string {
	return join(REPO_ROOT, distPath.replace(/^dist\//, '').replace(/\.js$/, ''));
}

/** The class a manifest path names, loaded from source (compiled by ts-jest) and made as n8n makes it. */
export function loadFromSource<T>(distPath: string): T {
	// A path known only at run time: a static import cannot name it.
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const module = require(`${sourceOf(distPath)}.ts`) as Record<string, new () => T>;
	const [Class] = Object.values(module);
	return new Class();
}
