package io.flashvec.cluster.metadata;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.flashvec.index.UnavailableException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The etcd transactions behind a shard's primary role and its replicas' stale marks (ADR 0019),
 * each checking in etcd what it depends on, and their effect on this process's view:
 *
 * <ul>
 *   <li>a takeover ({@link #tryLead}) requires that no primary exists and that the taker is not
 *       marked stale; the key {@code leaders/<collection>/<shard>} lives under the taker's lease;
 *   <li>a primary marks or clears a replica only while it holds the primary key, so a primary that
 *       was cut off or paused and has been replaced cannot mark its successor stale.
 * </ul>
 *
 * <p>Thread-safe.
 */
final class ShardFencing {

  private static final Logger LOG = LoggerFactory.getLogger(ShardFencing.class);

  private final Etcd etcd;
  private final StaleMarks stale;
  private final Leaders leaders;
  private final ScheduledExecutorService scheduler;
  private final LongSupplier lease;
  private final BooleanSupplier closed;

  /**
   * @param lease this node's registration lease (0: not registered)
   * @param closed whether the store closed (background retries stop)
   */
  ShardFencing(
      Etcd etcd,
      StaleMarks stale,
      Leaders leaders,
      ScheduledExecutorService scheduler,
      LongSupplier lease,
      BooleanSupplier closed) {
    this.etcd = etcd;
    this.stale = stale;
    this.leaders = leaders;
    this.scheduler = scheduler;
    this.lease = lease;
    this.closed = closed;
  }

  private ByteSequence leaderKey(String collection, int shard) {
    return etcd.key("leaders/" + collection + "/" + shard);
  }

  private ByteSequence staleKey(String collection, int shard, String nodeId) {
    return etcd.key("stale/" + collection + "/" + shard + "/" + nodeId);
  }

  /**
   * Makes {@code nodeId} the primary of a shard unless another node is, or its replica is marked
   * stale in etcd (checked in the same transaction: a replica that missed acknowledged writes must
   * never lead, whatever this process's cache says). The transaction also reads the shard's stale
   * marks, which replace this process's view of them: from then on only this primary removes marks
   * of the shard, so its view never misses a replica that must get its writes.
   *
   * @return the epoch (the revision that created the key), or 0
   */
  long tryLead(String collection, int shard, String nodeId) {
    long leaseId = lease.getAsLong();
    if (leaseId == 0) {
      return 0;
    }
    ByteSequence k = leaderKey(collection, shard);
    ByteSequence self = staleKey(collection, shard, nodeId);
    String marksPrefix = "stale/" + collection + "/" + shard + "/";
    var resp =
        Etcd.await(
            etcd.txn()
                .If(
                    new Cmp(k, Cmp.Op.EQUAL, CmpTarget.version(0)),
                    new Cmp(self, Cmp.Op.EQUAL, CmpTarget.version(0)))
                .Then(
                    Op.put(k, Etcd.bytes(nodeId), PutOption.builder().withLeaseId(leaseId).build()),
                    Op.get(etcd.key(marksPrefix), GetOption.builder().isPrefix(true).build()))
                .Else(Op.get(k, GetOption.DEFAULT), Op.get(self, GetOption.DEFAULT))
                .commit());
    String shardKey = collection + "/" + shard;
    if (resp.isSucceeded()) {
      long epoch = resp.getHeader().getRevision();
      Map<String, Long> marks = new HashMap<>();
      for (KeyValue kv : resp.getGetResponses().getFirst().getKvs()) {
        marks.put(etcd.keyOf(kv).substring("stale/".length()), kv.getModRevision());
      }
      stale.replace(shardKey + "/", marks, epoch);
      leaders.learn(shardKey, new Leader(nodeId, epoch));
      return epoch;
    }
    List<KeyValue> holder = resp.getGetResponses().get(0).getKvs();
    if (!holder.isEmpty()) {
      KeyValue kv = holder.getFirst();
      leaders.learn(shardKey, new Leader(Etcd.text(kv.getValue()), kv.getCreateRevision()));
    }
    List<KeyValue> mark = resp.getGetResponses().get(1).getKvs();
    if (!mark.isEmpty()) {
      stale.put(shardKey + "/" + nodeId, mark.getFirst().getModRevision());
    }
    return 0;
  }

  /** Gives up the primary role of epoch {@code epoch}; no-op if it has passed on already. */
  void resign(String collection, int shard, long epoch) {
    ByteSequence k = leaderKey(collection, shard);
    Etcd.await(
        etcd.txn()
            .If(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.createRevision(epoch)))
            .Then(Op.delete(k, DeleteOption.DEFAULT))
            .commit());
    leaders.resigned(collection + "/" + shard, epoch);
  }

  /**
   * Marks a replica as behind. With {@code primary} set the mark is fenced: etcd takes it only
   * while {@code primary} holds the shard's primary key; with {@code null} it is unconditional (a
   * replica marking itself, a proxy whose shard creation failed: marks that only add caution). The
   * current primary, of whatever epoch, has every acknowledged write, so a mark it puts is always
   * safe.
   *
   * <p>When etcd cannot take the mark now, or the shard has no primary at the moment, this throws
   * (the write that needed it is not acknowledged) and keeps trying in the background every second
   * until etcd takes it, another node leads the shard, or the store closes: the primary has applied
   * that write, so the replica that missed it must not pass for current once etcd is back (or once
   * the primary has taken its role again after its lease ran out during the outage).
   *
   * @throws NotPrimaryException if another node leads the shard
   */
  long markStale(String collection, int shard, String nodeId, String primary) {
    // not in the local set before etcd has it: a write retried meanwhile must not skip the
    // replica and be acknowledged by the primary alone while etcd does not know the replica is
    // behind (should the primary die, the replica would serve without that write)
    try {
      return putStale(collection, shard, nodeId, primary);
    } catch (NotPrimaryException e) {
      throw e;
    } catch (UnavailableException e) {
      retryStale(collection, shard, nodeId, primary);
      throw e;
    }
  }

  private long putStale(String collection, int shard, String nodeId, String primary) {
    ByteSequence k = staleKey(collection, shard, nodeId);
    long rev;
    if (primary == null) {
      rev = Etcd.await(etcd.client.getKVClient().put(k, Etcd.bytes(""))).getHeader().getRevision();
    } else {
      rev = fenced(collection, shard, primary, Op.put(k, Etcd.bytes(""), PutOption.DEFAULT));
    }
    stale.put(collection + "/" + shard + "/" + nodeId, rev);
    return rev;
  }

  /**
   * The refusal of a fenced change: {@link NotPrimaryException} when another node holds the primary
   * key ({@code holder}), a plain {@link UnavailableException} (worth retrying) when none does.
   */
  private UnavailableException notPrimary(
      String collection, int shard, String primary, List<KeyValue> holder) {
    String shardKey = collection + "/" + shard;
    if (holder.isEmpty()) {
      leaders.none(shardKey);
      return new UnavailableException(
          "Service unavailable: the shard has no primary at the moment [collection="
              + collection
              + ", shard="
              + shard
              + "]");
    }
    KeyValue kv = holder.getFirst();
    String node = Etcd.text(kv.getValue());
    leaders.learn(shardKey, new Leader(node, kv.getCreateRevision()));
    return new NotPrimaryException(
        "Service unavailable: this node is no longer the shard's primary [collection="
            + collection
            + ", shard="
            + shard
            + ", node="
            + primary
            + ", primary="
            + node
            + "]");
  }

  private void retryStale(String collection, int shard, String nodeId, String primary) {
    try {
      scheduler.schedule(
          () -> {
            if (closed.getAsBoolean()) {
              return;
            }
            try {
              putStale(collection, shard, nodeId, primary);
              LOG.info(
                  "replica marked stale after etcd came back [collection={}, shard={}, node={}]",
                  collection,
                  shard,
                  nodeId);
            } catch (NotPrimaryException gone) {
              LOG.info(
                  "not marking a replica stale: another node leads the shard [collection={},"
                      + " shard={}, node={}]: {}",
                  collection,
                  shard,
                  nodeId,
                  gone.getMessage());
            } catch (UnavailableException again) {
              retryStale(collection, shard, nodeId, primary);
            }
          },
          1,
          TimeUnit.SECONDS);
    } catch (RejectedExecutionException stopped) {
      // closing
    }
  }

  /**
   * Marks {@code nodeId}'s replica stale if another node leads the shard (checked by etcd in the
   * same transaction): a replaced primary that applied a write its successor lacks must not pass
   * for current. Returns whether it did.
   */
  boolean markStaleIfSuperseded(String collection, int shard, String nodeId) {
    ByteSequence k = staleKey(collection, shard, nodeId);
    ByteSequence leader = leaderKey(collection, shard);
    var resp =
        Etcd.await(
            etcd.txn()
                .If(
                    new Cmp(leader, Cmp.Op.GREATER, CmpTarget.version(0)),
                    new Cmp(leader, Cmp.Op.NOT_EQUAL, CmpTarget.value(Etcd.bytes(nodeId))))
                .Then(Op.put(k, Etcd.bytes(""), PutOption.DEFAULT))
                .commit());
    if (resp.isSucceeded()) {
      stale.put(collection + "/" + shard + "/" + nodeId, resp.getHeader().getRevision());
    }
    return resp.isSucceeded();
  }

  /**
   * Clears a replica's stale mark after {@code primary} copied its shard to it; fenced like {@link
   * #markStale}.
   *
   * @throws UnavailableException if {@code primary} does not lead the shard (any more)
   */
  void clearStale(String collection, int shard, String nodeId, String primary) {
    ByteSequence k = staleKey(collection, shard, nodeId);
    long rev = fenced(collection, shard, primary, Op.delete(k, DeleteOption.DEFAULT));
    stale.delete(collection + "/" + shard + "/" + nodeId, rev);
  }

  /**
   * Applies {@code change} in one etcd transaction with the check that {@code primary} holds the
   * shard's primary key, and returns the revision of the change.
   *
   * @throws UnavailableException if it does not ({@link #notPrimary})
   */
  private long fenced(String collection, int shard, String primary, Op change) {
    ByteSequence leader = leaderKey(collection, shard);
    var resp =
        Etcd.await(
            etcd.txn()
                .If(new Cmp(leader, Cmp.Op.EQUAL, CmpTarget.value(Etcd.bytes(primary))))
                .Then(change)
                .Else(Op.get(leader, GetOption.DEFAULT))
                .commit());
    if (!resp.isSucceeded()) {
      throw notPrimary(collection, shard, primary, resp.getGetResponses().getFirst().getKvs());
    }
    return resp.getHeader().getRevision();
  }
}
