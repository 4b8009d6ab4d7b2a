/**
 * Test helpers of the cluster module, shared with api-service's integration tests through the
 * cluster test-jar: certificates for the internal gRPC's TLS, query nodes in one JVM over
 * in-process gRPC ({@link io.flashvec.cluster.testing.InProcessNodes}) with metadata in memory
 * ({@link io.flashvec.cluster.testing.InMemoryClusterMetadata}), and random points with their exact
 * nearest neighbours.
 */
package io.flashvec.cluster.testing;
