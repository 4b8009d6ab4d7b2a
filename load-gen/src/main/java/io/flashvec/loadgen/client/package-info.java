/**
 * Clients of the systems under test: {@link io.flashvec.loadgen.client.QdrantRestClient} speaks the
 * Qdrant-shaped REST API of FlashVec (and of Qdrant itself), {@link
 * io.flashvec.loadgen.client.PgVectorClient} drives PostgreSQL + pgvector over JDBC.
 */
package io.flashvec.loadgen.client;
