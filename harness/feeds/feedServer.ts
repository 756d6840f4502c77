// A feed and an API on loopback whose items the test changes between polls: `/feed.xml` (RSS 2.0, as
// RSS Read fetches it) and `/records` (a JSON array, as HTTP Request lists it). Each answer is recorded,
// so a test knows exactly which items every poll was handed; `together(n)` holds the next n requests
// and answers them at the same moment, so n polls reach their claim at once.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const HOLD_LIMIT_MS = 15_000;

export interface FeedItem {
	/** The RSS guid and the record id. */
	id: string;
	/** A number that grows with every new item (for Value Is Higher). */
	seq: number;
	published: Date;
	/** Served without a guid, so only its link identifies it. */
	noGuid?: boolean;
}

export class FeedServer {
	/** What each request was answered with, in order. */
	readonly served: FeedItem[][] = [];
	private items: FeedItem[] = [];
	private held: Array<() => void> = [];
	private holdFor = 0;
	private releaseTimer: NodeJS.Timeout | undefined;

	private constructor(
		private readonly server: Server,
		readonly baseUrl: string,
	) {}

	static async start(): Promise<FeedServer> {
		const handler: { feed?: FeedServer } = {};
		const server = createServer((request, response) => handler.feed!.answer(request, response));
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		handler.feed = new FeedServer(
			server,
			`http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		);
		return handler.feed;
	}

	url(path: '/feed.xml' | '/records'): string {
		return `${this.baseUrl}${path}`;
	}

	/** The link RSS Read reports for an item. */
	linkOf(item: FeedItem): string {
		return `${this.baseUrl}/items/${item.id}`;
	}

	/** What the next requests are answered with, newest first as feeds list them. */
	setItems(items: FeedItem[]): void {
		this.items = [...items];
	}

	/** The next `count` requests wait for each other and are answered together. */
	together(count: number): void {
		this.holdFor = count;
	}

	close(): Promise<void> {
		this.release();
		return new Promise((resolve) => this.server.close(() => resolve()));
	}

	private answer(request: IncomingMessage, response: ServerResponse): void {
		const path = new URL(request.url ?? '/', this.baseUrl).pathname;
		if (path !== '/feed.xml' && path !== '/records') {
			response.writeHead(404).end();
			return;
		}
		const items = [...this.items];
		this.served.push(items);
		const send = () =>
			path === '/feed.xml'
				? response.writeHead(200, { 'content-type': 'application/rss+xml' }).end(this.rss(items))
				: response
						.writeHead(200, { 'content-type': 'application/json' })
						.end(JSON.stringify(items.map(record)));
		if (this.holdFor === 0) {
			send();
			return;
		}
		this.held.push(send);
		// A poll that never comes must not hang the others: after a while the held ones are answered anyway.
		if (this.held.length === 1) this.releaseTimer = setTimeout(() => this.release(), HOLD_LIMIT_MS);
		if (this.held.length >= this.holdFor) this.release();
	}

	private release(): void {
		clearTimeout(this.releaseTimer);
		const waiting = this.held;
		this.held = [];
		this.holdFor = 0;
		for (const send of waiting) send();
	}

	private rss(items: FeedItem[]): string {
		const entries = items.map(
			(item) =>
				`<item><title>Item ${item.id}</title><link>${this.linkOf(item)}</link>` +
				(item.noGuid ? '' : `<guid isPermaLink="false">${item.id}</guid>`) +
				`<pubDate>${item.published.toUTCString()}</pubDate></item>`,
		);
		return (
			'<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>' +
			`<title>Test feed</title><link>${this.baseUrl}/</link><description>Items change between polls</description>` +
			`${entries.join('')}</channel></rss>`
		);
	}
}

function record(item: FeedItem) {
	return {
		id: item.id,
		seq: item.seq,
		title: `Record ${item.id}`,
		createdAt: item.published.toISOString(),
	};
}
