/** Where a claim key comes from; chosen in the node's "Key Source" parameter. */
export type KeyRule =
	| { source: 'auto' }
	/** `structuredString`: the value may be an RFC 8941 string (`"…"`), keyed by what it spells. */
	| { source: 'header'; headerName: string; structuredString?: boolean }
	| { source: 'field'; fieldPath: string }
	| { source: 'expression'; value: unknown }
	/** A polled item's own value (Remove Duplicates' "Value to Dedupe On"), keyed like a field: `evt:` + value. */
	| { source: 'polled'; value: unknown };

/** How the key of one item was made; reported in the result so users can see why two deliveries matched. */
export type KeyOrigin =
	'body_id' | 'raw_body' | 'canonical_json' | 'header' | 'field' | 'expression' | 'polled_item';

export interface DerivedKey {
	key: string;
	origin: KeyOrigin;
	/** True when the value was too long (or held a NUL byte) for an index entry and was hashed instead. */
	hashedLongValue: boolean;
}

/** What the node hands key derivation for one item. */
export interface KeyInput {
	json: Record<string, unknown>;
	/** The exact request bytes (Webhook node, Raw Body option), when present. */
	rawBody?: Uint8Array;
}
