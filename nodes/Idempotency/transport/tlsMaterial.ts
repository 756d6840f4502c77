import { createPrivateKey, X509Certificate } from 'node:crypto';

import { TlsMaterialError } from '../errors';

export interface ClientIdentity {
	cert: string;
	key: string;
}

/**
 * The certificates pasted into the CA Certificate field, as PEM that Node's TLS accepts. Node silently
 * ignores text it cannot read as a CA and then fails every connection with "unable to verify the first
 * certificate", so the field is checked here instead. Several certificates (a provider's bundle) are kept.
 */
export function caCertificatesFrom(text: string): string {
	if (/PRIVATE KEY-----/.test(text)) {
		throw new TlsMaterialError(
			'CA Certificate holds a private key: paste the CA certificate (-----BEGIN CERTIFICATE-----) instead',
		);
	}
	return pemBlocks(text, 'CA Certificate', /CERTIFICATE/, isReadableCertificate).join('');
}

/** The client certificate and its key, for servers that authenticate users by certificate. */
export function clientIdentityFrom(certificateText: string, keyText: string): ClientIdentity {
	if (!keyText)
		throw new TlsMaterialError(
			'Client Certificate is set but Client Private Key is empty: paste both',
		);
	if (!certificateText)
		throw new TlsMaterialError(
			'Client Private Key is set but Client Certificate is empty: paste both',
		);
	if (/ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(keyText)) {
		throw new TlsMaterialError('Client Private Key is encrypted: paste it without a passphrase');
	}
	const [cert] = pemBlocks(
		certificateText,
		'Client Certificate',
		/CERTIFICATE/,
		isReadableCertificate,
	);
	const [key] = pemBlocks(keyText, 'Client Private Key', /(?:RSA |EC )?PRIVATE KEY/, isReadableKey);
	if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) {
		throw new TlsMaterialError('Client Private Key does not belong to Client Certificate');
	}
	return { cert, key };
}

/**
 * The PEM blocks of one label in a pasted field, rebuilt: n8n's single-line input drops the line breaks of
 * a pasted PEM, and JSON-escaped text carries literal `\n`.
 */
function pemBlocks(
	text: string,
	field: string,
	label: RegExp,
	readable: (pem: string) => boolean,
): string[] {
	const pattern = new RegExp(`-----BEGIN (${label.source})-----([\\s\\S]*?)-----END \\1-----`, 'g');
	const blocks = [...text.matchAll(pattern)];
	if (blocks.length === 0) {
		throw new TlsMaterialError(
			`${field} is not PEM text: paste it from its -----BEGIN … line to its -----END … line`,
		);
	}
	return blocks.map(([, kind, body], index) => {
		const base64 = body.replace(/\\[nr]|\s/g, '');
		const pem = `-----BEGIN ${kind}-----\n${base64.replace(/.{1,64}/g, '$&\n')}-----END ${kind}-----\n`;
		if (!readable(pem)) {
			const which = blocks.length > 1 ? `block ${index + 1} of ${blocks.length}` : 'its content';
			throw new TlsMaterialError(`${field}: ${which} is damaged (cannot be read)`);
		}
		return pem;
	});
}

function isReadableCertificate(pem: string): boolean {
	try {
		new X509Certificate(pem);
		return true;
	} catch {
		return false;
	}
}

function isReadableKey(pem: string): boolean {
	try {
		createPrivateKey(pem);
		return true;
	} catch {
		return false;
	}
}
