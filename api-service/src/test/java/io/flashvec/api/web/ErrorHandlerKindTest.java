package io.flashvec.api.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.flashvec.index.ConflictException;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import org.junit.jupiter.api.Test;

/** Error messages start with Qdrant's prefix for their kind, once. */
class ErrorHandlerKindTest {

  @Test
  void badInputAndMissingThingsGetQdrantsPrefixOnce() {
    assertThat(ErrorHandler.qdrantKind(new InvalidInputException("unknown distance [distance=x]")))
        .isEqualTo("Wrong input: unknown distance [distance=x]");
    assertThat(ErrorHandler.qdrantKind(new InvalidInputException("Wrong input: limit [limit=-1]")))
        .isEqualTo("Wrong input: limit [limit=-1]");
    assertThat(ErrorHandler.qdrantKind(new NotFoundException("no such point [id=3]")))
        .isEqualTo("Not found: no such point [id=3]");
    assertThat(ErrorHandler.qdrantKind(new NotFoundException("Not found: Collection `c`")))
        .isEqualTo("Not found: Collection `c`");
    assertThat(ErrorHandler.qdrantKind(new ConflictException("Wrong input: exists")))
        .isEqualTo("Wrong input: exists");
  }
}
