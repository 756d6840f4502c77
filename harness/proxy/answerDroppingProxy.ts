import type { PostgresCredentials } from '../../nodes/Idempotency/transport/postgresCredentials';
import { credentialsFromUrl } from '../postgres/connections';
import { WireProxy } from './wireProxy';

/** Postgres' ReadyForQuery message, idle: the server sends it after the transaction has committed. */
const READY_FOR_QUERY_IDLE = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);

/**
 * A proxy in front of a real Postgres that can lose one answer: once armed with a marker, the first
 * statement whose bytes carry the marker runs and commits on the server, and the connection is cut just
 * before the client would read the answer. That is the fault a dropped network link or a failover at
 * the wrong moment produces: the work is done, the client cannot know.
 */
export class AnswerDroppingProxy {
	private marker: Buffer | undefined;
	private proxy: WireProxy | undefined;
	dropped = 0;

	static async start(target: { host: string; port: number }): Promise<AnswerDroppingProxy> {
		const dropping = new AnswerDroppingProxy();
		dropping.proxy = await WireProxy.start(target, () => {
			let cutAtReady = false;
			return {
				fromClient: (chunk) => {
					if (dropping.marker && chunk.includes(dropping.marker)) {
						dropping.marker = undefined;
						cutAtReady = true;
					}
				},
				fromServer: (chunk) => {
					if (!cutAtReady || !chunk.includes(READY_FOR_QUERY_IDLE)) return true;
					dropping.dropped++;
					return false;
				},
			};
		});
		return dropping;
	}

	get port(): number {
		return this.proxy!.port;
	}

	/** The next statement whose bytes contain `marker` commits, and its answer is lost. */
	dropAnswerTo(marker: string): void {
		this.marker = Buffer.from(marker, 'utf8');
	}

	close(): Promise<void> {
		return this.proxy!.close();
	}
}

/**
 * A proxy in front of the server at `serverUrl()` (the test database) for the calling describe block, and the
 * credential through it.
 */
export function answerDroppingProxyForSuite(serverUrl: () => string): {
	proxy: () => AnswerDroppingProxy;
	credentials: () => PostgresCredentials;
} {
	let proxy: AnswerDroppingProxy | undefined;
	beforeAll(async () => {
		const url = new URL(serverUrl());
		proxy = await AnswerDroppingProxy.start({ host: url.hostname, port: Number(url.port || 5432) });
	});
	afterAll(() => proxy?.close());
	return {
		proxy: () => proxy!,
		credentials: () => ({
			...credentialsFromUrl(serverUrl()),
			host: '127.0.0.1',
			port: proxy!.port,
			maxConnections: 2,
		}),
	};
}
