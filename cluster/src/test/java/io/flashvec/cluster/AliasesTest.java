package io.flashvec.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flashvec.cluster.Aliases.Create;
import io.flashvec.cluster.Aliases.Delete;
import io.flashvec.cluster.Aliases.Rename;
import io.flashvec.index.ConflictException;
import io.flashvec.index.NotFoundException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class AliasesTest {

  private static final Set<String> COLLECTIONS = Set.of("a", "b");

  private static Map<String, String> apply(Map<String, String> current, Aliases.Change... c) {
    return Aliases.apply(current, List.of(c), COLLECTIONS::contains);
  }

  @Test
  void actionsApplyInOrder() {
    Map<String, String> m = apply(Map.of(), new Create("x", "a"), new Create("y", "a"));
    assertThat(m).isEqualTo(Map.of("x", "a", "y", "a"));
    // moving an alias: delete and create in one request, or create over it
    assertThat(apply(m, new Delete("x"), new Create("x", "b"))).containsEntry("x", "b");
    assertThat(apply(m, new Create("x", "b"))).isEqualTo(Map.of("x", "b", "y", "a"));
    assertThat(apply(m, new Rename("x", "z"))).isEqualTo(Map.of("z", "a", "y", "a"));
    assertThat(apply(m, new Rename("x", "y"))).isEqualTo(Map.of("y", "a"));
    assertThat(apply(m, new Delete("nope"))).as("deleting no alias is no error").isEqualTo(m);
    assertThat(apply(m, new Create("t", "a"), new Rename("t", "u"), new Delete("u"))).isEqualTo(m);
  }

  @Test
  void errorsAreQdrantsAndLeaveTheInputAsItWas() {
    Map<String, String> m = Map.of("x", "a");
    assertThatThrownBy(() -> apply(m, new Create("y", "a"), new Create("z", "nope")))
        .isInstanceOf(NotFoundException.class)
        .hasMessage("Not found: Collection `nope` doesn't exist!");
    assertThatThrownBy(() -> apply(m, new Create("y", "x")))
        .as("an alias of an alias")
        .isInstanceOf(NotFoundException.class)
        .hasMessage("Not found: Collection `x` doesn't exist!");
    assertThatThrownBy(() -> apply(m, new Delete("x"), new Create("b", "a")))
        .isInstanceOf(ConflictException.class)
        .hasMessage("Wrong input: Collection `b` already exists!");
    assertThatThrownBy(() -> apply(m, new Rename("x", "b")))
        .as("a rename onto a collection's name would hide the collection")
        .isInstanceOf(ConflictException.class)
        .hasMessage("Wrong input: Collection `b` already exists!");
    assertThatThrownBy(() -> apply(m, new Rename("q", "r")))
        .isInstanceOf(NotFoundException.class)
        .hasMessage("Not found: Alias q does not exists!");
    assertThat(m).isEqualTo(Map.of("x", "a"));
  }
}
