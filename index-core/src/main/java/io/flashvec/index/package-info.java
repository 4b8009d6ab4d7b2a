/**
 * Vectors: distance metrics, point ids, segments and the {@link io.flashvec.index.shard.Shard}
 * engine (WAL, growing segment, immutable list of sealed segments). Knows nothing of HTTP, gRPC or
 * Spring; callers validate requests through the exceptions in this package.
 */
package io.flashvec.index;
