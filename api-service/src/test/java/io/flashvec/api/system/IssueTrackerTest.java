package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.api.system.IssueTracker.Dated;
import io.flashvec.api.system.IssueTracker.Issue;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class IssueTrackerTest {

  private final AtomicLong now = new AtomicLong(1_000);
  private final IssueTracker tracker = new IssueTracker(() -> Instant.ofEpochSecond(now.get()));

  private static Issue issue(String id) {
    return new Issue(id, "d " + id, "s " + id, "c");
  }

  @Test
  void issuesAreDatedWhenFirstSeen() {
    assertThat(tracker.report(List.of(issue("a"))))
        .extracting(Dated::since)
        .containsExactly(Instant.ofEpochSecond(1_000));
    now.set(2_000);
    assertThat(tracker.report(List.of(issue("a"), issue("b"))))
        .extracting(Dated::since)
        .containsExactly(Instant.ofEpochSecond(1_000), Instant.ofEpochSecond(2_000));
  }

  @Test
  void clearedIssuesStayHiddenWhileTheyLastAndComeBackWhenTheyRecur() {
    tracker.report(List.of(issue("a")));
    tracker.clear(List.of(issue("a")));
    assertThat(tracker.report(List.of(issue("a")))).isEmpty();
    now.set(2_000);
    assertThat(tracker.report(List.of(issue("b"))))
        .as("a new issue is reported")
        .extracting(d -> d.issue().id())
        .containsExactly("b");
    // a went away above; when it comes back it is reported again, newly dated
    now.set(3_000);
    assertThat(tracker.report(List.of(issue("a"), issue("b"))))
        .extracting(d -> d.issue().id() + "@" + d.since().getEpochSecond())
        .containsExactly("a@3000", "b@2000");
  }
}
