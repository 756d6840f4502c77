import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { REPO_ROOT } from '../../harness/repo';

export const REPOSITORY_URL = 'https://github.com/n8n-nodes-idempotency/n8n-nodes-idempotency';

/**
 * The anchors GitHub gives the README's headings: lower-cased, punctuation dropped, spaces turned into
 * hyphens, and a repeated heading numbered (-1, -2, …). Headings inside code blocks are not headings.
 */
export function readmeAnchors(
	markdown = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'),
): Set<string> {
	const anchors = new Set<string>();
	const seen = new Map<string, number>();
	let inFence = false;
	for (const line of markdown.split('\n')) {
		if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
		const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
		if (!heading) continue;
		const slug = heading[1]
			.toLowerCase()
			.replace(/[^\p{L}\p{N}\s_-]/gu, '')
			.replace(/\s/g, '-');
		const count = seen.get(slug) ?? 0;
		seen.set(slug, count + 1);
		anchors.add(count === 0 ? slug : `${slug}-${count}`);
	}
	return anchors;
}
