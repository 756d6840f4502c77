// tsc emits only JavaScript: the icons and codex JSON n8n loads beside each
// node and credential are copied into dist/ here, as the classic starter did.
const { src, dest } = require('gulp');

function copyAssets() {
	return src(['nodes/**/*.{png,svg,json}', 'credentials/**/*.{png,svg}'], {
		base: '.',
		encoding: false,
	}).pipe(dest('dist'));
}

exports['build:assets'] = copyAssets;
