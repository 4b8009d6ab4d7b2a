package io.flashvec.api.system;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The issues {@code GET /issues} reports, in Qdrant's sense: problems of the server that need a
 * person, each with an id ({@code <kind>/<instance>}), a description, a solution and the collection
 * it concerns. They are found from the server's state when asked ({@link #report}); each is dated
 * when first seen. {@code DELETE /issues} dismisses those reported so far ({@link #clear}): a
 * dismissed issue stays hidden while it lasts and is reported again, newly dated, if it goes away
 * and comes back.
 *
 * <p>Thread-safe.
 */
final class IssueTracker {

  /** An issue as the server's state shows it now. */
  record Issue(String id, String description, String solution, String relatedCollection) {}

  /** An issue with the time it was first seen. */
  record Dated(Issue issue, Instant since) {}

  private final Supplier<Instant> clock;
  private final Map<String, Instant> firstSeen = new HashMap<>();
  private final Set<String> dismissed = new HashSet<>();

  IssueTracker(Supplier<Instant> clock) {
    this.clock = clock;
  }

  /** {@code current} without the dismissed issues, dated, in the order given. */
  synchronized List<Dated> report(List<Issue> current) {
    forgetGone(current);
    Instant now = clock.get();
    List<Dated> out = new ArrayList<>();
    for (Issue i : current) {
      Instant since = firstSeen.computeIfAbsent(i.id(), k -> now);
      if (!dismissed.contains(i.id())) {
        out.add(new Dated(i, since));
      }
    }
    return out;
  }

  /** Dismisses every issue in {@code current}. */
  synchronized void clear(List<Issue> current) {
    forgetGone(current);
    for (Issue i : current) {
      dismissed.add(i.id());
      firstSeen.putIfAbsent(i.id(), clock.get());
    }
  }

  private void forgetGone(List<Issue> current) {
    Set<String> ids = new HashSet<>();
    current.forEach(i -> ids.add(i.id()));
    firstSeen.keySet().retainAll(ids);
    dismissed.retainAll(ids);
  }
}
