import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

import { readmeAnchors } from './readmeAnchors';

export interface MarkdownLink {
	/** The file the link is in, relative to the repository. */
	file: string;
	line: number;
	target: string;
}

/** Every link and image of a Markdown file outside code blocks and code spans, web addresses left out. */
export function relativeLinksOf(markdown: string, file: string): MarkdownLink[] {
	const links: MarkdownLink[] = [];
	let inFence = false;
	markdown.split('\n').forEach((text, index) => {
		if (/^\s*(```|~~~)/.test(text)) inFence = !inFence;
		if (inFence) return;
		const outsideCode = text.replace(/`[^`]*`/g, '``');
		for (const match of outsideCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
			const target = match[1];
			if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
			links.push({ file, line: index + 1, target });
		}
	});
	return links;
}

/** Why this link leads nowhere (a missing file, a heading that is not there), or null when it resolves. */
export function brokenReason(repo: string, link: MarkdownLink): string | null {
	const [path, anchor] = link.target.split('#', 2);
	const targetFile = path
		? join(dirname(join(repo, link.file)), decodeURI(path))
		: join(repo, link.file);
	if (!existsSync(targetFile)) return `${relative(repo, targetFile)} does not exist`;
	if (anchor === undefined) return null;
	if (statSync(targetFile).isDirectory() || !targetFile.endsWith('.md'))
		return `an anchor into ${relative(repo, targetFile)}, which has no headings`;
	if (!readmeAnchors(readFileSync(targetFile, 'utf8')).has(anchor))
		return `${relative(repo, targetFile)} has no heading #${anchor}`;
	return null;
}
