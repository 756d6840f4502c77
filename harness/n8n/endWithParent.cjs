// Loaded into every n8n process `npm run dev` starts (NODE_OPTIONS=--require): when the process that
// started it is gone, however it ended (Ctrl-C, a closed terminal, kill -9), n8n stops too instead of
// holding the port against a stopped database. A process whose parent dies is handed to another parent,
// so a changed parent pid is the sign. n8n gets SIGTERM (its own clean shutdown); if it is still there
// 10 s later, its process group (n8n and its task runner) gets SIGKILL.
'use strict';

const parent = process.ppid;
const watch = setInterval(() => {
	if (process.ppid === parent) return;
	clearInterval(watch);
	setTimeout(() => {
		try {
			process.kill(-process.pid, 'SIGKILL'); // n8n leads its own process group
		} catch {
			process.kill(process.pid, 'SIGKILL'); // a CLI command does not
		}
	}, 10_000).unref();
	process.kill(process.pid, 'SIGTERM');
}, 1000);
watch.unref();
