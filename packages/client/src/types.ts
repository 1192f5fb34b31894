/** Type-level helpers the client's modules share (not exported from the package). */

/** The keys of `T` that are required: `never` when every key is optional. */
export type RequiredKeysOf<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** `true` when `A` and `B` are the same union: a table that must cover exactly a set of names checks with it. */
export type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
