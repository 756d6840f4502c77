/** Output indexes of the Idempotency Claim node, for a key per item and for a watermark alike. */
export const NEW_OUTPUT = 0;
export const DUPLICATE_OUTPUT = 1;
/** Only while a payload fingerprint is set (the node's outputs expression adds it). */
export const MISMATCH_OUTPUT = 2;
