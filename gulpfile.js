// tsc emits only JavaScript: the icons and codex JSON n8n loads beside each
// node and credential are copied into dist/ here, as the classic starter did.
const { existsSync, readdirSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { src, dest, series } = require('gulp');

const ASSET_FILE = /\.(png|svg|json)$/;

// Copies left from an earlier build go first: a renamed or deleted icon would
// otherwise stay in dist/ and `npm pack` would ship it.
async function removeCopiedAssets() {
	for (const folder of ['dist/nodes', 'dist/credentials'].filter((path) => existsSync(path))) {
		for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
			if (entry.isFile() && ASSET_FILE.test(entry.name)) rmSync(join(entry.parentPath, entry.name));
		}
	}
}

function copyAssets() {
	return src(['nodes/**/*.{png,svg,json}', 'credentials/**/*.{png,svg}'], { base: '.', encoding: false }).pipe(
		dest('dist'),
	);
}

exports['build:assets'] = series(removeCopiedAssets, copyAssets);
