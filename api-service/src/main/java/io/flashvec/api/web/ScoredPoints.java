package io.flashvec.api.web;

import io.flashvec.index.PointId;
import io.flashvec.index.Record;
import java.math.BigInteger;
import java.util.List;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.SerializableString;
import tools.jackson.core.io.SerializedString;
import tools.jackson.databind.JacksonSerializable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.SerializationContext;
import tools.jackson.databind.jsontype.TypeSerializer;
import tools.jackson.databind.node.POJONode;

/**
 * A list of search hits that writes itself as {@link Output#scoredList} renders it, without
 * building the tree first: the same bytes, one pass.
 *
 * <p>A search answered with neither payload nor vector (the default) is most of the traffic, and
 * its tree was a map of five entries per hit made only to be written once. Such a hit is written
 * straight to the generator here; a hit with its payload or vector is rendered by {@link
 * Output#scored} and written from its tree, so the two stay one rendering.
 */
public final class ScoredPoints implements JacksonSerializable {

  private static final SerializableString ID = new SerializedString("id");
  private static final SerializableString VERSION = new SerializedString("version");
  private static final SerializableString SCORE = new SerializedString("score");
  private static final SerializableString PAYLOAD = new SerializedString("payload");
  private static final SerializableString VECTOR = new SerializedString("vector");

  private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);

  private final List<Record> hits;
  private final Output.PayloadSelector payload;
  private final boolean withVector;

  private ScoredPoints(List<Record> hits, Output.PayloadSelector payload, boolean withVector) {
    this.hits = hits;
    this.payload = payload;
    this.withVector = withVector;
  }

  /**
   * A node that is written as {@code Output.scoredList(hits, payload, withVector)} is, for a
   * response tree that is only written ({@link Json#ok}).
   */
  public static JsonNode node(
      List<Record> hits, Output.PayloadSelector payload, boolean withVector) {
    return new POJONode(new ScoredPoints(hits, payload, withVector));
  }

  @Override
  public void serialize(JsonGenerator g, SerializationContext ctxt) {
    g.writeStartArray(hits, hits.size());
    boolean plain = !payload.any() && !withVector;
    for (Record r : hits) {
      if (plain) {
        g.writeStartObject();
        g.writeName(ID);
        writeId(g, r.id());
        g.writeName(VERSION);
        g.writeNumber(0);
        g.writeName(SCORE);
        g.writeNumber(r.score());
        g.writeName(PAYLOAD);
        g.writeNull();
        g.writeName(VECTOR);
        g.writeNull();
        g.writeEndObject();
      } else {
        Output.scored(r, payload, withVector).serialize(g, ctxt);
      }
    }
    g.writeEndArray();
  }

  @Override
  public void serializeWithType(JsonGenerator g, SerializationContext ctxt, TypeSerializer t) {
    serialize(g, ctxt);
  }

  /** An id as {@link Json#putId} puts it: an unsigned 64-bit number or a UUID string. */
  private static void writeId(JsonGenerator g, PointId id) {
    if (id.isUuid()) {
      g.writeString(id.toString());
    } else if (id.number() >= 0) {
      g.writeNumber(id.number());
    } else {
      g.writeNumber(BigInteger.valueOf(id.number()).add(TWO_64));
    }
  }
}
