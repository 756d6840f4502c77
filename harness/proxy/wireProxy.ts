import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** What one relayed connection does with the bytes it passes on. */
export interface RelayRules {
	/** Sees each chunk the client sends, before it reaches the server. */
	fromClient?(chunk: Buffer): void;
	/** Sees each chunk the server sends; false cuts the connection instead of passing the chunk on. */
	fromServer?(chunk: Buffer): boolean;
}

/**
 * A TCP relay in front of a real Postgres (or a pooler): what a client sends and what the server answers
 * pass through it unchanged, where a test can see them, or cut a connection at a chosen moment.
 */
export class WireProxy {
	private readonly sockets = new Set<Socket>();

	private constructor(
		private readonly server: Server,
		readonly port: number,
	) {}

	/** `rules()` is asked once per client connection. */
	static async start(
		target: { host: string; port: number },
		rules: () => RelayRules = () => ({}),
	): Promise<WireProxy> {
		const server = createServer();
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const proxy = new WireProxy(server, (server.address() as { port: number }).port);
		server.on('connection', (client) => proxy.relay(client, target, rules()));
		return proxy;
	}

	async close(): Promise<void> {
		for (const socket of this.sockets) socket.destroy();
		await new Promise((resolve) => this.server.close(resolve));
	}

	private relay(client: Socket, target: { host: string; port: number }, rules: RelayRules): void {
		const upstream = createConnection(target);
		this.sockets.add(client).add(upstream);
		const end = () => {
			client.destroy();
			upstream.destroy();
			this.sockets.delete(client);
			this.sockets.delete(upstream);
		};
		client.on('data', (chunk) => {
			rules.fromClient?.(chunk);
			upstream.write(chunk);
		});
		upstream.on('data', (chunk) => {
			if (rules.fromServer?.(chunk) === false) end();
			else client.write(chunk);
		});
		client.on('close', end).on('error', end);
		upstream.on('close', end).on('error', end);
	}
}
