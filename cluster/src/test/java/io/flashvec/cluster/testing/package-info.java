/**
 * Test helpers of the cluster module, shared with api-service's integration tests through the
 * cluster test-jar: certificates for the internal gRPC's TLS.
 */
package io.flashvec.cluster.testing;
