/**
 * The value types every layer shares: point ids and points, distance metrics, collection, index and
 * search parameters, and the exceptions that carry their HTTP status. The package depends on no
 * package of the engine; the engine itself is in {@link io.flashvec.index.shard} (one shard's data
 * flow), {@link io.flashvec.index.collection}, {@link io.flashvec.index.segment}, {@link
 * io.flashvec.index.diskann}, {@link io.flashvec.index.disk}, {@link io.flashvec.index.payload},
 * {@link io.flashvec.index.filter} and {@link io.flashvec.index.query}. Knows nothing of HTTP, gRPC
 * or Spring.
 */
package io.flashvec.index;
