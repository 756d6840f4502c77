import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** Postgres' ReadyForQuery message, idle: the server sends it after the transaction has committed. */
const READY_FOR_QUERY_IDLE = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);

/**
 * A TCP proxy in front of a real Postgres that can lose one answer: once armed with a marker, the first
 * statement whose bytes carry the marker runs and commits on the server, and the connection is cut just
 * before the client would read the answer. That is the fault a dropped network link or a failover at
 * the wrong moment produces: the work is done, the client cannot know.
 */
export class AnswerDroppingProxy {
	private marker: Buffer | undefined;
	private readonly sockets = new Set<Socket>();
	dropped = 0;

	private constructor(
		private readonly server: Server,
		readonly port: number,
	) {}

	static async start(target: { host: string; port: number }): Promise<AnswerDroppingProxy> {
		const server = createServer();
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const proxy = new AnswerDroppingProxy(server, (server.address() as { port: number }).port);
		server.on('connection', (client) => proxy.relay(client, target));
		return proxy;
	}

	/** The next statement whose bytes contain `marker` commits, and its answer is lost. */
	dropAnswerTo(marker: string): void {
		this.marker = Buffer.from(marker, 'utf8');
	}

	async close(): Promise<void> {
		for (const socket of this.sockets) socket.destroy();
		await new Promise((resolve) => this.server.close(resolve));
	}

	private relay(client: Socket, target: { host: string; port: number }): void {
		const upstream = createConnection(target);
		this.sockets.add(client).add(upstream);
		let cutAtReady = false;
		client.on('data', (chunk) => {
			if (this.marker && chunk.includes(this.marker)) {
				this.marker = undefined;
				cutAtReady = true;
			}
			upstream.write(chunk);
		});
		upstream.on('data', (chunk) => {
			if (cutAtReady && chunk.includes(READY_FOR_QUERY_IDLE)) {
				this.dropped++;
				client.destroy();
				upstream.destroy();
				return;
			}
			client.write(chunk);
		});
		const end = () => {
			client.destroy();
			upstream.destroy();
			this.sockets.delete(client);
			this.sockets.delete(upstream);
		};
		client.on('close', end).on('error', end);
		upstream.on('close', end).on('error', end);
	}
}
