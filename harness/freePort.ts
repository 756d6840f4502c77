import { createServer, type AddressInfo } from 'node:net';

/**
 * A port that is free right now on 127.0.0.1 (there is a small race until the caller binds it; good
 * enough for throwaway test and dev servers).
 */
export function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const server = createServer();
		server.unref();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as AddressInfo;
			server.close(() => resolve(port));
		});
	});
}
