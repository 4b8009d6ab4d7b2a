package io.flashvec.index.shard;

/**
 * The shard contract when the growing segment is sealed every 37 points, so searches merge many
 * sealed segments (kept in memory, searched exactly) with the growing one, and seals land inside
 * batches, across replacements and deletions, during recovery and under concurrent searches.
 */
class ShardSealEvery37Test extends ShardContractTest {

  @Override
  protected int sealThreshold() {
    return 37;
  }
}
