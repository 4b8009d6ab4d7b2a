/**
 * Distribution: the {@link io.flashvec.cluster.CollectionService} the REST layer calls, the {@link
 * io.flashvec.cluster.MetadataStore} that records collections, and (later) shard placement, gRPC
 * services and broadcast-gather. Standalone runs {@link io.flashvec.cluster.LocalCollectionService}
 * in-process behind the same interface. Knows nothing about HTTP.
 */
package io.flashvec.cluster;
