/**
 * n8n's node picker searches each node's display name and the `alias` list of its codex file (the
 * `.node.json` n8n reads beside the compiled node). Users search for their problem, not for our name.
 */
import { readFileSync } from 'node:fs';

import { loadFromSource, manifest, sourceOf } from '../support/packageSources';

interface Codex {
	node: string;
	categories: string[];
	resources: { primaryDocumentation: Array<{ url: string }> };
	alias: string[];
}

/** The codex n8n loads for a node: the source's `X.node.json`, which the build copies beside `X.node.js`. */
function codexFor(distPath: string): { codex: Codex; nodeName: string } {
	const codex = JSON.parse(readFileSync(`${sourceOf(distPath)}.json`, 'utf8')) as Codex;
	const node = loadFromSource<{ description: { name: string } }>(distPath);
	return { codex, nodeName: node.description.name };
}

/** n8n's picker matches when the query's letters appear in order in a name or alias, ignoring case. */
function pickerMatches(query: string, candidate: string): boolean {
	let at = 0;
	for (const letter of candidate.toLowerCase()) if (letter === query[at]) at++;
	return at === query.length;
}

const nodes = manifest.n8n.nodes.map(codexFor);
const claim = nodes.find(({ nodeName }) => nodeName === 'idempotencyClaim')!;

it.each(nodes)(
	'$nodeName: the codex names its node as n8n loads it and has aliases',
	({ codex, nodeName }) => {
		expect(codex.node).toBe(`${manifest.name}.${nodeName}`);
		expect(codex.resources.primaryDocumentation.length).toBeGreaterThan(0);
		expect(codex.alias.length).toBeGreaterThan(0);
		for (const alias of codex.alias) expect(alias).toEqual(alias.trim());
		expect(new Set(codex.alias.map((alias) => alias.toLowerCase())).size).toBe(codex.alias.length);
	},
);

it.each([
	'duplicate',
	'duplicates',
	'dedup',
	'dedupe',
	'deduplicate',
	'deduplication',
	'idempotent',
	'idempotency',
	'webhook retry',
	'retry',
	'once',
	'exactly once',
	'remove duplicates',
	'watermark',
	'new items',
])('searching "%s" finds Idempotency Claim through an alias', (query) => {
	// Words the display name "Idempotency Claim" does not carry must come from an alias.
	expect(claim.codex.alias.some((alias) => pickerMatches(query, alias))).toBe(true);
});

it('searching "clear deduplication history" finds Idempotency Key', () => {
	const key = nodes.find(({ nodeName }) => nodeName === 'idempotencyKey')!;
	expect(key.codex.alias.some((alias) => pickerMatches('clear deduplication history', alias))).toBe(
		true,
	);
});

it('searching "purge" or "cleanup" finds Idempotency Key', () => {
	const key = nodes.find(({ nodeName }) => nodeName === 'idempotencyKey')!;
	for (const query of ['purge', 'cleanup'])
		expect(key.codex.alias.some((alias) => pickerMatches(query, alias))).toBe(true);
});
