// The last step of `npm run build`: n8n's community-node rules forbid runtime dependencies, so the `pg` driver
// ships inside the package. esbuild turns pg and the pure-JavaScript packages it requires into one CommonJS
// file, dist/node_modules/pg.js. Node looks for `pg` in every node_modules folder above the requiring file,
// so each require('pg') that tsc left in dist/ finds this one, nearest, copy: the compiled code stays file
// for file as tsc wrote it, and the whole package (every node, the credential test) shares one pg instance,
// as before (one pool per credential per process). The licences of what was bundled go beside it.
import { build } from 'esbuild';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT } from '../harness/repo';

const OUT_DIR = join(REPO_ROOT, 'dist', 'node_modules');
const OUT_FILE = join(OUT_DIR, 'pg.js');

async function bundlePg(): Promise<void> {
	const { metafile } = await build({
		// pg's CommonJS entry (its "require" export), so the bundle's module.exports is pg's own object.
		entryPoints: [require.resolve('pg')],
		outfile: OUT_FILE,
		// Not minified: readable, each module headed by its node_modules path as a comment.
		bundle: true,
		platform: 'node',
		format: 'cjs',
		target: 'node20',
		// Required only inside pg's lazy `pg.native` getter, which answers null when it is missing.
		external: ['pg-native'],
		metafile: true,
		absWorkingDir: REPO_ROOT, // the metafile's paths are relative to it
		logLevel: 'warning',
	});
	writeFileSync(join(OUT_DIR, 'pg.LICENSES.txt'), licenceNotice(Object.keys(metafile.inputs)));
}

/** Each bundled package's name, version, licence and licence text, from the files esbuild read. */
function licenceNotice(inputs: string[]): string {
	const packageDirs = new Set(
		inputs.map((input) => /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1]),
	);
	const sections = [...packageDirs]
		.filter((dir): dir is string => dir !== undefined)
		.sort()
		.map((dir) => {
			const folder = join(REPO_ROOT, dir);
			const { name, version, license } = JSON.parse(
				readFileSync(join(folder, 'package.json'), 'utf8'),
			) as { name: string; version: string; license: string };
			const licenceFile = readdirSync(folder).find((file) => /^licen[cs]e/i.test(file));
			const text = licenceFile
				? readFileSync(join(folder, licenceFile), 'utf8').trim()
				: `(${license}, as its package.json says; the package ships no licence file)`;
			return `${name}@${version} (${license})\n\n${text}`;
		});
	return `dist/node_modules/pg.js bundles these packages:\n\n${sections.join('\n\n---\n\n')}\n`;
}

bundlePg().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
