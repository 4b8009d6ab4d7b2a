package io.flashvec.index.shard;

import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.SealedSegment;
import io.flashvec.index.segment.Segment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An immutable view of a shard's segments: the sealed ones on disk, then the ones in memory (frozen
 * segments waiting for their build, and last the growing segment that takes writes). {@code
 * retired} holds segments just replaced (by their build or by a compaction), still readable through
 * point locations that a reader fetched before the replacement; they are not searched or counted.
 *
 * <p>Reference counted: the shard holds one reference while the snapshot is current, and a reader
 * that touches mapped segment data (search, get) holds one from {@link Shard#acquire} to {@link
 * #release}. When the count reaches zero the snapshot gives up its references on its sealed
 * segments; a sealed segment is closed (and, once a compaction replaced it, its files deleted) when
 * no snapshot and no manifest refers to it, so no search ever runs on an unmapped segment.
 */
public final class Snapshot {
  private final List<SealedSegment> sealed;
  private final List<GrowingSegment> memory;
  private final List<Segment> segments;
  private final List<Segment> retired;
  private final SegmentSet owner;
  private final AtomicInteger refs = new AtomicInteger(1);

  Snapshot(
      SegmentSet owner,
      List<SealedSegment> sealed,
      List<GrowingSegment> memory,
      List<Segment> retired) {
    this.owner = owner;
    this.sealed = List.copyOf(sealed);
    this.memory = List.copyOf(memory);
    List<Segment> all = new ArrayList<>(sealed.size() + memory.size());
    all.addAll(sealed);
    all.addAll(memory);
    this.segments = List.copyOf(all);
    this.retired = List.copyOf(retired);
  }

  /** Every searched segment: the sealed ones, then the ones in memory. */
  public List<Segment> segments() {
    return segments;
  }

  /** The sealed segments, oldest first. */
  public List<SealedSegment> sealed() {
    return sealed;
  }

  /** The segments in memory: frozen ones waiting for their build, then the growing one. */
  public List<GrowingSegment> memory() {
    return memory;
  }

  /** Segments just replaced, readable through old locations, not searched. */
  public List<Segment> retired() {
    return retired;
  }

  /** The growing segment that takes writes, or {@code null} (a closed shard's last snapshot). */
  GrowingSegment growing() {
    GrowingSegment g = memory.isEmpty() ? null : memory.getLast();
    return g == null || g.frozen() ? null : g;
  }

  boolean tryAcquire() {
    return SegmentSet.incrementIfPositive(refs);
  }

  /** Gives back a reference taken by {@link Shard#acquire}. */
  public void release() {
    int r = refs.decrementAndGet();
    assert r >= 0 : "snapshot released too often";
    if (r == 0) {
      // Every segment loses this snapshot's reference even if dropping one of them fails: an
      // error escaping one unref must not leave the others mapped for the life of the process.
      Throwable failure = null;
      for (SealedSegment s : sealed) {
        failure = unref(s, failure);
      }
      for (Segment s : retired) {
        failure = unref(s, failure); // a retired growing segment holds no reference: a no-op
      }
      if (failure instanceof Error e) {
        throw e;
      } else if (failure != null) {
        throw (RuntimeException) failure; // unref throws no checked exception
      }
    }
  }

  private Throwable unref(Segment s, Throwable failure) {
    try {
      owner.unref(s);
    } catch (RuntimeException | Error e) {
      if (failure == null) {
        return e;
      }
      failure.addSuppressed(e);
    }
    return failure;
  }

  /** The searched or retired segment with this id, or {@code null}. */
  Segment byId(int id) {
    for (Segment s : segments) {
      if (s.id() == id) {
        return s;
      }
    }
    for (Segment s : retired) {
      if (s.id() == id) {
        return s;
      }
    }
    return null;
  }
}
