package io.flashvec.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class CollectionNamesTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "a",
        "Z",
        "0",
        "_",
        "-",
        "-a",
        "docs",
        "my-collection_v1.2",
        "a..b",
        "a.",
        "1.2.3",
        "ABC_def-9"
      })
  void validNamesAreReturnedUnchanged(String name) {
    assertThat(CollectionNames.validate(name)).isSameAs(name);
  }

  @Test
  void upTo255CharactersAreAllowed() {
    String max = "x".repeat(255);
    assertThat(CollectionNames.validate(max)).isEqualTo(max);
    assertThatThrownBy(() -> CollectionNames.validate("x".repeat(256)))
        .isInstanceOf(CollectionNames.InvalidNameException.class);
    assertThatThrownBy(() -> CollectionNames.validate("." + "x".repeat(254)))
        .isInstanceOf(CollectionNames.InvalidNameException.class);
  }

  @ParameterizedTest
  @NullSource
  @ValueSource(
      strings = {
        "",
        ".",
        "..",
        "../x",
        "..\\x",
        "a/b",
        "/abs",
        "a\\b",
        ".hidden",
        "a b",
        " a",
        "a ",
        "%2F",
        "a%2Fb",
        "a:b",
        "a*",
        "a?",
        "a\u0000b",
        "a\nb",
        "abc\n",
        "é",
        "caf\u00e9",
        "\u0430" // Cyrillic a, looks like a Latin one
      })
  void invalidNamesAreRejectedWithTheRule(String name) {
    assertThatThrownBy(() -> CollectionNames.validate(name))
        .isInstanceOf(CollectionNames.InvalidNameException.class)
        .hasMessage(
            "Validation error in path parameters: [collection_name: invalid collection name [name="
                + name
                + ", allowed=1-255 characters of A-Z a-z 0-9 _ - . not starting with .]]");
  }

  @Test
  void theMessageIsExact() {
    assertThatThrownBy(() -> CollectionNames.validate("../x"))
        .isInstanceOf(CollectionNames.InvalidNameException.class)
        .hasMessage(
            "Validation error in path parameters: [collection_name: invalid collection name"
                + " [name=../x, allowed=1-255 characters of A-Z a-z 0-9 _ - . not starting with .]]")
        .satisfies(
            e ->
                assertThat(((CollectionNames.InvalidNameException) e).httpStatus()).isEqualTo(422));
    assertThatThrownBy(() -> CollectionNames.validateInBody("a/b", "alias_name"))
        .hasMessage(
            "Validation error in JSON body: [alias_name: invalid collection name"
                + " [name=a/b, allowed=1-255 characters of A-Z a-z 0-9 _ - . not starting with .]]");
  }
}
