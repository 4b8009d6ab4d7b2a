package io.flashvec.cluster;

import io.flashvec.index.ConflictException;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.NotFoundException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Collection aliases: other names a collection answers to on every collection route, changed by
 * Qdrant's {@code POST /collections/aliases} actions. A store applies a request's actions with
 * {@link #apply} to a copy of its aliases and keeps the result only if every action succeeded, so a
 * request changes all of them or none (an alias can be moved from one collection to another without
 * a moment where it names neither).
 *
 * <p>An alias never has the name of a collection, and a collection is never created under an
 * alias's name, so a name means one thing; deleting a collection deletes its aliases.
 */
public final class Aliases {

  private Aliases() {}

  /** One action of a request. */
  public sealed interface Change permits Create, Delete, Rename {}

  /**
   * Makes {@code alias} name {@code collection} (which must exist, by its own name); an alias of
   * that name already there is moved to it.
   */
  public record Create(String alias, String collection) implements Change {}

  /** Removes {@code alias}; nothing happens when there is none. */
  public record Delete(String alias) implements Change {}

  /** Renames alias {@code from} (which must exist) to {@code to}, replacing an alias {@code to}. */
  public record Rename(String from, String to) implements Change {}

  /**
   * {@code current} (alias to collection) with {@code changes} applied in order; {@code current} is
   * not modified.
   *
   * @param collectionExists whether a collection of that name exists
   * @throws NotFoundException if an alias is created for a collection that does not exist, or an
   *     alias that does not exist is renamed
   * @throws ConflictException if an alias would get the name of a collection
   */
  public static Map<String, String> apply(
      Map<String, String> current, List<Change> changes, Predicate<String> collectionExists) {
    Map<String, String> next = new TreeMap<>(current);
    for (Change c : changes) {
      switch (c) {
        case Create(String alias, String collection) -> {
          if (!collectionExists.test(collection)) {
            throw new NotFoundException(
                "Not found: Collection `" + collection + "` doesn't exist!");
          }
          requireNoCollection(alias, collectionExists);
          next.put(alias, collection);
        }
        case Delete(String alias) -> next.remove(alias);
        case Rename(String from, String to) -> {
          String collection = next.get(from);
          if (collection == null) {
            throw new NotFoundException("Not found: Alias " + from + " does not exists!");
          }
          requireNoCollection(to, collectionExists);
          next.remove(from);
          next.put(to, collection);
        }
      }
    }
    return next;
  }

  private static void requireNoCollection(String alias, Predicate<String> collectionExists) {
    if (collectionExists.test(alias)) {
      throw new ConflictException("Wrong input: Collection `" + alias + "` already exists!");
    }
  }

  /** The 400 of creating collection {@code name} where an alias of that name exists. */
  /** Checks the new alias names of {@code changes} (Qdrant's 422 for an invalid one). */
  public static void validateNames(List<Change> changes) {
    for (Change c : changes) {
      switch (c) {
        case Create(String alias, String collection) ->
            CollectionNames.validateInBody(alias, "alias_name");
        case Rename(String from, String to) -> CollectionNames.validateInBody(to, "new_alias_name");
        case Delete d -> {}
      }
    }
  }

  public static InvalidInputException aliasExists(String name) {
    return new InvalidInputException(
        "Wrong input: Can't create collection with name "
            + name
            + ". Alias with the same name already exists");
  }
}
