/**
 * Distribution: the {@link io.flashvec.cluster.CollectionService} the REST layer calls, the {@link
 * io.flashvec.cluster.metadata.MetadataStore} that records collections, and (later) shard
 * placement, gRPC services and broadcast-gather. Standalone runs {@link
 * io.flashvec.cluster.local.LocalCollectionService} in-process behind the same interface. Knows
 * nothing about HTTP.
 */
package io.flashvec.cluster;
