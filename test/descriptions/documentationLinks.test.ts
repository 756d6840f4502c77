/**
 * The editor's "docs" links (the credential dialog, the node panel) open the README on GitHub: each must
 * land on a heading that exists, not on the top of the page.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { IdempotencyPostgresApi } from '../../credentials/IdempotencyPostgresApi.credentials';
import { REPO_ROOT as REPO } from '../../harness/repo';
import { REPOSITORY_URL, readmeAnchors } from '../support/readmeAnchors';

const anchors = readmeAnchors();

function anchorOf(url: string): string {
	expect(url.startsWith(`${REPOSITORY_URL}#`)).toBe(true);
	return url.slice(REPOSITORY_URL.length + 1);
}

it('derives GitHub anchors the way GitHub does', () => {
	expect(
		readmeAnchors('# A: b `c`\n## A: b c\n```\n# not a heading\n```\n### Options → Scope'),
	).toEqual(new Set(['a-b-c', 'a-b-c-1', 'options--scope']));
});

it('sends the credential dialog to the README section about the credential', () => {
	const anchor = anchorOf(new IdempotencyPostgresApi().documentationUrl);
	expect(anchor).toBe('credential-idempotency-postgres');
	expect(anchors).toContain(anchor);
});

const codexFiles = readdirSync(join(REPO, 'nodes', 'Idempotency')).filter((file) =>
	file.endsWith('.node.json'),
);

it.each(codexFiles)('%s links only to README headings that exist', (file) => {
	const codex = JSON.parse(readFileSync(join(REPO, 'nodes', 'Idempotency', file), 'utf8')) as {
		resources: Record<string, Array<{ url: string }>>;
	};
	const urls = Object.values(codex.resources)
		.flat()
		.map((resource) => resource.url);
	expect(urls.length).toBeGreaterThan(0);
	for (const url of urls) expect(anchors).toContain(anchorOf(url));
});
