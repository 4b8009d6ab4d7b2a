package io.flashvec.index.payload;

import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.segment.AcceptedOrdinals;
import io.flashvec.index.segment.GrowingSegment;
import io.flashvec.index.segment.Segment;
import io.flashvec.storage.CrashPoint;
import io.flashvec.storage.FileIO;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.DocValues;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.LogDocMergePolicy;
import org.apache.lucene.index.MultiReader;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.index.SortedNumericDocValues;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause.Occur;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.Weight;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.MMapDirectory;
import org.apache.lucene.util.NumericUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The payload indexes of one shard: a Lucene index per segment, in which document {@code i} is the
 * payload of ordinal {@code i} (ADR 0010).
 *
 * <ul>
 *   <li><b>Disk segments</b> get an on-disk index in their directory, {@code
 *       payload-<schema-hash>/}, built when the segment is built or compacted (before it is
 *       published), or at open when it is missing (a crash, or a schema change), and opened with
 *       {@link MMapDirectory}. It is written to a {@code .tmp} directory, committed (Lucene fsyncs
 *       its files) and renamed, so a half-built index is never opened; it is derived data, and
 *       rebuilt whenever it is missing or does not match.
 *   <li><b>Growing segments</b> get an in-memory index that catches up with the segment's new
 *       ordinals when a query needs it (near-real-time reader), so writes never wait for it.
 * </ul>
 *
 * Deleted points stay in the Lucene indexes; queries combine the matches with the segment's
 * deletion bits. Readers are reference-counted: a query holds its reader while it uses it, and a
 * replaced or dropped index closes when its last query finishes. An empty schema keeps no indexes.
 */
public final class PayloadIndexes implements Closeable {

  private static final Logger LOG = LoggerFactory.getLogger(PayloadIndexes.class);
  private static final String DIR_PREFIX = "payload-";

  /** A reader with a reference held; {@link #close()} releases it. */
  public static final class Handle implements Closeable {
    final DirectoryReader reader;
    final PayloadSchema schema;
    final IndexSearcher searcher;

    Handle(DirectoryReader reader, PayloadSchema schema) {
      this.reader = reader;
      this.schema = schema;
      this.searcher = new IndexSearcher(reader);
      this.searcher.setQueryCache(null);
    }

    public PayloadSchema schema() {
      return schema;
    }

    @Override
    public void close() {
      try {
        reader.decRef();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** The current index of one segment. */
  private interface Entry {
    /** The reader with a reference taken, or {@code null} if it closed meanwhile. */
    Handle acquire(Segment seg);

    PayloadSchema schema();

    void close();
  }

  private record DiskEntry(DirectoryReader reader, PayloadSchema schema, Path dir)
      implements Entry {
    @Override
    public Handle acquire(Segment seg) {
      return reader.tryIncRef() ? new Handle(reader, schema) : null;
    }

    @Override
    public void close() {
      try {
        reader.decRef();
      } catch (IOException e) {
        LOG.warn("error closing payload index [dir={}]", dir, e);
      }
    }
  }

  /** In-memory index of a growing segment; appends catch up under the entry's lock. */
  private static final class MemoryEntry implements Entry {
    private final PayloadSchema schema;
    private final PayloadDocuments docs;
    private final IndexWriter writer;
    private DirectoryReader reader; // guarded by this
    private int indexed; // guarded by this
    private boolean closed; // guarded by this

    MemoryEntry(PayloadSchema schema) throws IOException {
      this.schema = schema;
      this.docs = new PayloadDocuments(schema);
      this.writer = new IndexWriter(new ByteBuffersDirectory(), config(docs));
      this.reader = DirectoryReader.open(writer);
    }

    @Override
    public PayloadSchema schema() {
      return schema;
    }

    @Override
    public synchronized Handle acquire(Segment seg) {
      if (closed) {
        return null;
      }
      try {
        int n = seg.size();
        if (indexed < n) {
          for (int ord = indexed; ord < n; ord++) {
            writer.addDocument(docs.document(seg.payloadAt(ord)));
          }
          indexed = n;
          DirectoryReader next = DirectoryReader.openIfChanged(reader, writer);
          if (next != null) {
            reader.decRef();
            reader = next;
          }
        }
        reader.incRef();
        return new Handle(reader, schema);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public synchronized void close() {
      if (closed) {
        return;
      }
      closed = true;
      try {
        reader.decRef();
        writer.close();
      } catch (IOException e) {
        LOG.warn("error closing in-memory payload index", e);
      }
    }
  }

  private final FileIO io;
  private volatile PayloadSchema schema;
  private final Map<Segment, Entry> entries = new ConcurrentHashMap<>();
  private final Map<Segment, Path> diskDirs = new ConcurrentHashMap<>();

  /** Growing segments that left the shard (weakly held: they go when the last reader does). */
  private final java.util.Set<Segment> droppedGrowing =
      java.util.Collections.synchronizedSet(
          java.util.Collections.newSetFromMap(new java.util.WeakHashMap<>()));

  private final Object lock = new Object();
  private volatile boolean closed;

  public PayloadIndexes(FileIO io, PayloadSchema schema) {
    this.io = io;
    this.schema = schema;
  }

  public PayloadSchema schema() {
    return schema;
  }

  private static IndexWriterConfig config(PayloadDocuments docs) {
    IndexWriterConfig c = new IndexWriterConfig(docs.analyzer());
    // Merges of adjacent segments only, so document ids stay equal to ordinals.
    c.setMergePolicy(new LogDocMergePolicy());
    c.setCommitOnClose(false);
    return c;
  }

  /**
   * Registers a disk segment opened with its shard, without touching its files: {@link #setSchema}
   * then opens or builds its index.
   */
  public void register(Segment seg, Path segmentDir) {
    diskDirs.put(seg, segmentDir);
  }

  /**
   * Opens the index of a disk segment for the current schema, building it first when it is missing
   * or unreadable, and removes indexes of other schemas from the segment directory. Call before the
   * segment is published (build, compaction, shard open).
   */
  public void openDisk(Segment seg, Path segmentDir) throws IOException {
    synchronized (lock) {
      diskDirs.put(seg, segmentDir);
      PayloadSchema s = schema;
      removeOthers(segmentDir, s.isEmpty() ? null : DIR_PREFIX + s.hash());
      if (!s.isEmpty()) {
        install(seg, openOrBuild(seg, segmentDir, s));
      }
    }
  }

  /** Makes {@code e} the segment's index unless the segment was dropped meanwhile. */
  private void install(Segment seg, Entry e) {
    Entry old = entries.put(seg, e);
    if (old != null) {
      old.close();
    }
    if (!diskDirs.containsKey(seg) && entries.remove(seg, e)) {
      e.close(); // dropped while it was being built
    }
  }

  private Entry openOrBuild(Segment seg, Path segmentDir, PayloadSchema s) throws IOException {
    Path dir = segmentDir.resolve(DIR_PREFIX + s.hash());
    DirectoryReader r = openIfValid(seg, dir);
    if (r == null) {
      build(seg, segmentDir, s);
      r = DirectoryReader.open(new MMapDirectory(dir));
    }
    return new DiskEntry(r, s, dir);
  }

  /**
   * The segment's index in {@code dir} if it exists and matches the segment; otherwise removes
   * whatever is there and returns {@code null}.
   */
  private DirectoryReader openIfValid(Segment seg, Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return null;
    }
    try {
      DirectoryReader r = DirectoryReader.open(new MMapDirectory(dir));
      if (r.maxDoc() == seg.size()) {
        return r;
      }
      r.close();
      LOG.warn(
          "payload index does not match its segment; rebuilding [dir={}, docs={}, points={}]",
          dir,
          r.maxDoc(),
          seg.size());
    } catch (IOException | RuntimeException e) {
      LOG.warn("unreadable payload index; rebuilding [dir={}]", dir, e);
    }
    io.deleteTree(dir);
    return null;
  }

  /**
   * Writes the segment's index for {@code s} into {@code payload-<hash>.tmp/}, commits it (Lucene
   * fsyncs its files) and renames it to {@code payload-<hash>/}: a crash leaves either no index or
   * a complete one, plus perhaps a {@code .tmp} directory that the next open removes.
   */
  private void build(Segment seg, Path segmentDir, PayloadSchema s) throws IOException {
    Path dir = segmentDir.resolve(DIR_PREFIX + s.hash());
    long t0 = System.nanoTime();
    Path tmp = segmentDir.resolve(DIR_PREFIX + s.hash() + ".tmp");
    io.deleteTree(tmp);
    PayloadDocuments docs = new PayloadDocuments(s);
    try {
      try (FSDirectory d = FSDirectory.open(tmp);
          IndexWriter w = new IndexWriter(d, config(docs).setRAMBufferSizeMB(64))) {
        int n = seg.size();
        for (int ord = 0; ord < n; ord++) {
          w.addDocument(docs.document(seg.payloadAt(ord)));
        }
        w.forceMerge(1);
        io.crashPoint(CrashPoint.PAYLOAD_INDEX_WRITTEN);
        w.commit(); // fsyncs the index files and its commit point
      }
      io.crashPoint(CrashPoint.PAYLOAD_INDEX_COMMITTED);
      io.atomicMove(tmp, dir);
      io.crashPoint(CrashPoint.PAYLOAD_INDEX_RENAMED);
    } catch (IOException | RuntimeException e) {
      // A full disk, say: leave no half-built index behind; it is rebuilt when next needed.
      try {
        io.deleteTree(tmp);
      } catch (IOException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    io.fsyncDirectory(segmentDir);
    LOG.info(
        "payload index built [dir={}, points={}, fields={}, millis={}]",
        dir,
        seg.size(),
        s.fields().keySet(),
        (System.nanoTime() - t0) / 1_000_000);
  }

  private void removeOthers(Path segmentDir, String keep) throws IOException {
    for (Path p : io.list(segmentDir, DIR_PREFIX + "*")) {
      if (!p.getFileName().toString().equals(keep)) {
        io.deleteTree(p);
      }
    }
  }

  /**
   * Keeps a disk segment open while its index is rebuilt: a compaction may retire the segment
   * meanwhile, and its mapped files must not be unmapped (or deleted) under the build.
   */
  public interface Pins {
    /** Takes a reference on {@code seg}; {@code false} when it is already closed or closing. */
    boolean pin(Segment seg);

    /** Releases a reference taken by {@link #pin}. */
    void unpin(Segment seg);
  }

  /**
   * Builds the index of every disk segment registered here for {@code next} without using it:
   * queries and the schema in force stay as they are, and {@link #setSchema} then only opens what
   * this built. A payload-schema change builds first and commits after, so that a crash before its
   * commit leaves the old schema: these directories are then not the current schema's, and the next
   * {@link #setSchema} or open removes them. On failure this removes what it built.
   */
  public void prepare(PayloadSchema next, Pins pins) throws IOException {
    if (next.isEmpty()) {
      return;
    }
    synchronized (lock) {
      try {
        forEachOutdated(
            next,
            pins,
            (seg, segmentDir) -> {
              DirectoryReader r = openIfValid(seg, segmentDir.resolve(DIR_PREFIX + next.hash()));
              if (r != null) {
                r.close();
              } else {
                build(seg, segmentDir, next);
              }
            });
      } catch (IOException | RuntimeException e) {
        if (!next.equals(schema)) {
          for (Path segmentDir : diskDirs.values()) {
            try {
              io.deleteTree(segmentDir.resolve(DIR_PREFIX + next.hash()));
              io.deleteTree(segmentDir.resolve(DIR_PREFIX + next.hash() + ".tmp"));
            } catch (IOException suppressed) {
              e.addSuppressed(suppressed); // the next open removes it
            }
          }
        }
        throw e;
      }
    }
  }

  /**
   * Switches to a new schema: rebuilds the index of every disk segment registered here (the old
   * ones serve queries until each is replaced) and restarts the in-memory ones. Segments that
   * {@code pins} cannot pin are leaving the shard and are skipped. Removes the segments' indexes of
   * other schemas (an uncommitted {@link #prepare} or a crashed build included). Returns when done.
   */
  public void setSchema(PayloadSchema next, Pins pins) throws IOException {
    synchronized (lock) {
      schema = next;
      forEachOutdated(
          next,
          pins,
          (seg, segmentDir) -> {
            if (next.isEmpty()) {
              Entry e = entries.remove(seg);
              if (e != null) {
                e.close();
              }
              removeOthers(segmentDir, null);
            } else {
              install(seg, openOrBuild(seg, segmentDir, next));
              removeOthers(segmentDir, DIR_PREFIX + next.hash());
            }
          });
      for (Map.Entry<Segment, Entry> e : new ArrayList<>(entries.entrySet())) {
        if (e.getValue() instanceof MemoryEntry && entries.remove(e.getKey(), e.getValue())) {
          e.getValue().close();
        }
      }
    }
  }

  /** Work on one disk segment's index directory. */
  private interface SegmentWork {
    void run(Segment seg, Path segmentDir) throws IOException;
  }

  /**
   * Runs {@code work} on each disk segment registered here whose index is not of {@code next}, with
   * the segment pinned; segments that leave the shard meanwhile are skipped ({@link #drop} forgets
   * them).
   */
  private void forEachOutdated(PayloadSchema next, Pins pins, SegmentWork work) throws IOException {
    for (Map.Entry<Segment, Path> d : new ArrayList<>(diskDirs.entrySet())) {
      Segment seg = d.getKey();
      Entry old = entries.get(seg);
      if (old != null && old.schema().equals(next)) {
        continue;
      }
      if (!pins.pin(seg)) {
        continue; // retired meanwhile
      }
      try {
        if (diskDirs.containsKey(seg)) {
          work.run(seg, d.getValue());
        }
      } finally {
        pins.unpin(seg);
      }
    }
  }

  /** Forgets a segment that left the shard (its files go with the segment directory). */
  public void drop(Segment seg) {
    diskDirs.remove(seg);
    if (seg instanceof GrowingSegment) {
      droppedGrowing.add(seg); // a reader still holding it must not index it again
    }
    Entry e = entries.remove(seg);
    if (e != null) {
      e.close();
    }
  }

  /**
   * The segment's index with a reference held, or {@code null} when the schema is empty or the
   * segment has none (a disk segment opened before any schema, or one being dropped).
   */
  public Handle acquire(Segment seg) {
    PayloadSchema s = schema;
    if (s.isEmpty() || closed) {
      return null;
    }
    Entry e = entries.get(seg);
    if (seg instanceof GrowingSegment && (e == null || !e.schema().equals(s))) {
      if (droppedGrowing.contains(seg)) {
        return null; // sealed and replaced: a late reader evaluates payloads instead
      }
      // Created on first use, and again after a schema change; never under the build lock.
      Entry fresh;
      try {
        fresh = new MemoryEntry(s);
      } catch (IOException ex) {
        throw new UncheckedIOException(ex);
      }
      Entry prev = e;
      e =
          prev == null
              ? entries.putIfAbsent(seg, fresh)
              : (entries.replace(seg, prev, fresh) ? null : entries.get(seg));
      if (e == null) {
        e = fresh;
        if (prev != null) {
          prev.close();
        }
      } else {
        fresh.close();
      }
      if (droppedGrowing.contains(seg) && entries.remove(seg, e)) {
        e.close(); // dropped while it was being created
        return null;
      }
      if (closed) {
        return null;
      }
    }
    return e == null ? null : e.acquire(seg);
  }

  /**
   * The live ordinals of {@code seg} that {@code filter} accepts: from the payload index where the
   * filter translates (checking only the candidates with the evaluator when the translation is not
   * exact), else by evaluating every live point.
   */
  public AcceptedOrdinals accepted(Segment seg, FilterEvaluator filter) {
    if (filter.needsVectors()) {
      // has_vector asks the segment, ordinal by ordinal
      return AcceptedOrdinals.evaluate(
          seg,
          (java.util.function.IntPredicate)
              ord ->
                  filter.matches(
                      seg.idAt(ord),
                      filter.needsPayload() ? seg.payloadAt(ord) : null,
                      name -> seg.hasVector(ord, name)));
    }
    try (Handle h = acquire(seg)) {
      if (h != null) {
        FilterQueries.Translation t = FilterQueries.translate(filter.filter(), h.schema);
        if (!t.useless()) {
          int n = Math.min(seg.size(), h.reader.maxDoc());
          long[] words = matches(h, t.query(), n);
          return AcceptedOrdinals.fromCandidates(seg, words, n, t.exact() ? null : filter::matches);
        }
      }
    }
    return AcceptedOrdinals.evaluate(seg, filter::matches);
  }

  /** The documents below {@code n} that match {@code q}, as a bitset. */
  static long[] matches(Handle h, Query q, int n) {
    long[] words = new long[(n + 63) >>> 6];
    try {
      Weight w = h.searcher.createWeight(h.searcher.rewrite(q), ScoreMode.COMPLETE_NO_SCORES, 1f);
      for (LeafReaderContext leaf : h.reader.leaves()) {
        Scorer s = w.scorer(leaf);
        if (s == null) {
          continue;
        }
        DocIdSetIterator it = s.iterator();
        for (int doc = it.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = it.nextDoc()) {
          int ord = leaf.docBase + doc;
          if (ord >= n) {
            break;
          }
          words[ord >>> 6] |= 1L << ord;
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return words;
  }

  /**
   * One text-search or {@code order_by} result.
   *
   * @param slot the segment's position in the list searched
   * @param ord the point's ordinal in that segment
   * @param score BM25 score, or the {@code order_by} value
   */
  public record Hit(int slot, int ord, double score) {}

  /** BM25's term-frequency saturation and length normalisation, as Lucene and fastembed use. */
  static final float K1 = 1.2f;

  static final float B = 0.75f;

  /**
   * BM25 search of {@code tokens} (any of them) in text field {@code field} over {@code segs}, with
   * term statistics over all of them (one {@link MultiReader}), so scores are comparable across
   * segments. Only live points that {@code accepted} allows (per slot; {@code null}: all live) are
   * returned; best first, at most {@code k}. Scores are classic BM25, {@code Σ idf · tf (k1 + 1) /
   * (tf + k1 (1 − b + b · len/avglen))}, as Qdrant's BM25 (fastembed's term weights with the IDF
   * modifier) scores: Lucene leaves out the constant {@code k1 + 1}, so it is put back.
   */
  public List<Hit> textSearch(
      List<Segment> segs,
      String field,
      List<String> tokens,
      int k,
      java.util.function.IntFunction<AcceptedOrdinals> accepted) {
    if (k <= 0 || tokens.isEmpty()) {
      return List.of();
    }
    List<Handle> handles = new ArrayList<>();
    List<Integer> slots = new ArrayList<>();
    try {
      for (int i = 0; i < segs.size(); i++) {
        Handle h = acquire(segs.get(i));
        if (h == null) {
          continue;
        }
        PayloadFieldSchema f = h.schema.field(field);
        if (f == null || f.type() != PayloadFieldSchema.Type.TEXT) {
          h.close();
          continue;
        }
        handles.add(h);
        slots.add(i);
      }
      if (handles.isEmpty()) {
        return List.of();
      }
      IndexReader[] subs = new IndexReader[handles.size()];
      int[] starts = new int[handles.size() + 1];
      for (int i = 0; i < subs.length; i++) {
        subs[i] = handles.get(i).reader;
        starts[i + 1] = starts[i] + subs[i].maxDoc();
      }
      AcceptedOrdinals[] acc = new AcceptedOrdinals[subs.length];
      for (int i = 0; i < subs.length; i++) {
        acc[i] = accepted == null ? null : accepted.apply(slots.get(i));
      }
      java.util.PriorityQueue<Hit> heap =
          new java.util.PriorityQueue<>(java.util.Comparator.comparingDouble(Hit::score));
      try (MultiReader mr = new MultiReader(subs, false)) {
        IndexSearcher searcher = new IndexSearcher(mr);
        searcher.setQueryCache(null);
        searcher.setSimilarity(new org.apache.lucene.search.similarities.BM25Similarity(K1, B));
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (String t : tokens) {
          b.add(new TermQuery(new Term(PayloadDocuments.TEXT + field, t)), Occur.SHOULD);
        }
        Weight w = searcher.createWeight(searcher.rewrite(b.build()), ScoreMode.COMPLETE, 1f);
        for (LeafReaderContext leaf : mr.leaves()) {
          Scorer sc = w.scorer(leaf);
          if (sc == null) {
            continue;
          }
          int sub = ReaderUtil.subIndex(leaf.docBase, starts);
          Segment seg = segs.get(slots.get(sub));
          int size = seg.size();
          DocIdSetIterator it = sc.iterator();
          for (int doc = it.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = it.nextDoc()) {
            int ord = leaf.docBase + doc - starts[sub];
            if (ord >= size || seg.isDeleted(ord) || (acc[sub] != null && !acc[sub].get(ord))) {
              continue;
            }
            double score = sc.score() * (K1 + 1.0);
            if (heap.size() < k) {
              heap.add(new Hit(slots.get(sub), ord, score));
            } else if (score > heap.peek().score()) {
              heap.poll();
              heap.add(new Hit(slots.get(sub), ord, score));
            }
          }
        }
      }
      List<Hit> out = new ArrayList<>(heap);
      out.sort(java.util.Comparator.comparingDouble(Hit::score).reversed());
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      for (Handle h : handles) {
        h.close();
      }
    }
  }

  /**
   * The {@code order_by} values of the accepted points of one segment: every value of a numeric or
   * datetime key (a point with several is visited once per value, as Qdrant lists it once per
   * value), read from the index's doc values (or the payloads when the segment has no index).
   * Points without a value are left out; {@code visit} gets each value and ordinal.
   */
  public void orderValues(
      Segment seg,
      PayloadFieldSchema f,
      AcceptedOrdinals accepted,
      java.util.function.ObjIntConsumer<Double> visit) {
    boolean datetime = f.type() == PayloadFieldSchema.Type.DATETIME;
    String name = (datetime ? PayloadDocuments.DATETIME : PayloadDocuments.NUMBER) + f.field();
    try (Handle h = acquire(seg)) {
      if (h != null && f.equals(h.schema.field(f.field()))) {
        int n = accepted.size();
        for (LeafReaderContext leaf : h.reader.leaves()) {
          SortedNumericDocValues dv = DocValues.getSortedNumeric(leaf.reader(), name);
          int end = Math.min(n, leaf.docBase + leaf.reader().maxDoc());
          for (int ord = accepted.next(leaf.docBase);
              ord >= 0 && ord < end;
              ord = accepted.next(ord + 1)) {
            if (!dv.advanceExact(ord - leaf.docBase)) {
              continue;
            }
            // every value: a point with several appears once per value, as in Qdrant
            for (int i = 0, count = dv.docValueCount(); i < count; i++) {
              long raw = dv.nextValue();
              visit.accept(datetime ? (double) raw : NumericUtils.sortableLongToDouble(raw), ord);
            }
          }
        }
        return;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (int ord = accepted.next(0); ord >= 0; ord = accepted.next(ord + 1)) {
      for (double v : PayloadDocuments.orderValues(seg.payloadAt(ord), f)) {
        visit.accept(v, ord);
      }
    }
  }

  /** Segments with an index here, for statistics. */
  public List<Segment> indexedSegments() {
    return List.copyOf(entries.keySet());
  }

  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      for (Entry e : entries.values()) {
        e.close();
      }
      entries.clear();
    }
  }
}
