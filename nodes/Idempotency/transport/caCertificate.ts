import { X509Certificate } from 'node:crypto';

/** A CA Certificate field that holds no usable certificate; its message names the problem. */
export class CaCertificateError extends Error {
	name = 'CaCertificateError';
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g;

/**
 * The certificates pasted into the credential's CA Certificate field, as PEM that Node's TLS accepts.
 * Node silently ignores text it cannot read as a CA and then fails every connection with "unable to verify
 * the first certificate", so the field is checked here instead. A single-line input drops the line breaks
 * of a pasted PEM, and JSON-escaped text carries literal `\n`: both are rebuilt. Several certificates (a
 * provider's bundle) are kept as they come.
 */
export function caCertificatesFrom(text: string): string {
	if (/PRIVATE KEY-----/.test(text)) {
		throw new CaCertificateError('CA Certificate holds a private key: paste the CA certificate (-----BEGIN CERTIFICATE-----) instead');
	}
	const blocks = [...text.matchAll(PEM_BLOCK)];
	if (blocks.length === 0) {
		throw new CaCertificateError(
			'CA Certificate is not a PEM certificate: paste the text from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----',
		);
	}
	return blocks
		.map((block, index) => {
			const base64 = block[1].replace(/\\[nr]|\s/g, '');
			const pem = `-----BEGIN CERTIFICATE-----\n${base64.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
			if (!isReadableCertificate(pem)) {
				const which = blocks.length > 1 ? `certificate ${index + 1} of ${blocks.length}` : 'the certificate';
				throw new CaCertificateError(`CA Certificate: ${which} is damaged (not a readable X.509 certificate)`);
			}
			return pem;
		})
		.join('');
}

function isReadableCertificate(pem: string): boolean {
	try {
		new X509Certificate(pem);
		return true;
	} catch {
		return false;
	}
}
