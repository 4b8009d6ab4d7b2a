package io.flashvec.index.shard;

/** The shard contract with one growing segment that only {@link Shard#flush()} seals. */
class ShardTest extends ShardContractTest {

  @Override
  protected int sealThreshold() {
    return 100_000;
  }
}
