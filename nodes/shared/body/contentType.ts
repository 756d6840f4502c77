/** A Content-Type header as n8n's webhook server reads it: the media type lowercased, its parameters after `;`. */
export interface ContentType {
	/** `application/json`, lowercased and trimmed. */
	type: string;
	/** The charset parameter, lowercased, without quotes; undefined when the header names none. */
	charset: string | undefined;
}

export function parseContentType(header: string): ContentType {
	const [type, ...parameters] = header.split(';');
	let charset: string | undefined;
	for (const parameter of parameters) {
		const equals = parameter.indexOf('=');
		if (equals < 0 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue;
		charset = parameter
			.slice(equals + 1)
			.trim()
			.replace(/^"(.*)"$/, '$1')
			.toLowerCase();
	}
	return { type: type.trim().toLowerCase(), charset };
}

/** JSON (`application/json`, any `…/…+json`) and forms are the bodies n8n parses that the node can read back. */
export function bodyFormat({ type }: ContentType): 'json' | 'form' | undefined {
	if (type === 'application/json' || /^[^/\s]+\/[^/\s]+\+json$/.test(type)) return 'json';
	if (type === 'application/x-www-form-urlencoded') return 'form';
	return undefined;
}

/** Every provider sends UTF-8; a header that names another charset would make n8n decode the same bytes as other text. */
export function isUtf8({ charset }: ContentType): boolean {
	return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}
