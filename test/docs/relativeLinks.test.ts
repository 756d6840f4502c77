/**
 * Every relative link and anchor of the README and the docs/ pages leads somewhere: a file that exists
 * and, after `#`, a heading that file has (GitHub's anchors, as the editor's docs links use them).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { brokenReason, relativeLinksOf } from '../support/markdownLinks';
import { REPO_ROOT as REPO } from '../../harness/repo';

const pages = [
	'README.md',
	...readdirSync(join(REPO, 'docs'))
		.filter((file) => file.endsWith('.md'))
		.map((file) => `docs/${file}`),
];

it('finds links outside code, and tells a broken one from a good one', () => {
	const markdown =
		'See [a](docs/x.md#y), `[b](nowhere)`, [c](https://example.com)\n```\n[d](no)\n```';
	expect(relativeLinksOf(markdown, 'README.md').map((link) => link.target)).toEqual([
		'docs/x.md#y',
	]);
	expect(brokenReason(REPO, { file: 'README.md', line: 1, target: 'docs/missing.md' })).toMatch(
		/does not exist/,
	);
	expect(brokenReason(REPO, { file: 'README.md', line: 1, target: '#no-such-heading' })).toMatch(
		/no heading/,
	);
	expect(brokenReason(REPO, { file: 'README.md', line: 1, target: '#development' })).toBeNull();
});

it.each(pages)('%s: every relative link and anchor resolves', (page) => {
	const links = relativeLinksOf(readFileSync(join(REPO, page), 'utf8'), page);
	const broken = links
		.map((link) => ({ link, reason: brokenReason(REPO, link) }))
		.filter(({ reason }) => reason !== null)
		.map(({ link, reason }) => `${link.file}:${link.line} (${link.target}): ${reason}`);
	expect(broken).toEqual([]);
});
