/** Segments: the unit of storage and search inside a shard, and their search helpers. */
package io.flashvec.index.segment;
