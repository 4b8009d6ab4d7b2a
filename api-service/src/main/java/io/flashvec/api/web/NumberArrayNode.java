package io.flashvec.api.web;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.RandomAccess;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.DoubleNode;
import tools.jackson.databind.node.IntNode;
import tools.jackson.databind.node.JsonNodeFactory;

/**
 * An {@link ArrayNode} of ints and doubles as {@link JsonTreeReader} reads a vector: the values are
 * kept in a {@code double[]} and an element's node ({@code IntNode} or {@code DoubleNode}, as
 * Jackson's tree has them) is made when it is read. It is an ordinary array node to every reader
 * and writer (equality, serialisation and changes go through its element list; the first change
 * turns the list into plain nodes), and {@link Requests#vector} takes the values without nodes: a
 * 768-d search body made 768 {@code DoubleNode}s plus the list's growth, most of the server's
 * allocation at 3,500 searches/s.
 */
final class NumberArrayNode extends ArrayNode {

  private final Values values;

  private NumberArrayNode(Values values) {
    super(JsonNodeFactory.instance, values);
    this.values = values;
  }

  /** The element values as doubles, or {@code null} once the array has been changed. */
  double[] doubles() {
    return values.nodes == null ? values.doubles : null;
  }

  /** Number of elements. */
  int count() {
    return values.size();
  }

  /** Collects the values of one array while the reader reads it. */
  static final class Builder {
    private double[] doubles;
    private boolean[] ints;
    private int size;

    /** A builder for an array of about {@code expected} elements (it grows past them). */
    Builder(int expected) {
      int n = Math.max(expected, 1);
      doubles = new double[n];
      ints = new boolean[n];
    }

    void add(double v, boolean isInt) {
      if (size == doubles.length) {
        doubles = Arrays.copyOf(doubles, size * 2);
        ints = Arrays.copyOf(ints, size * 2);
      }
      doubles[size] = v;
      ints[size] = isInt;
      size++;
    }

    /** The array read so far as a node of its values. */
    ArrayNode build() {
      return new NumberArrayNode(new Values(doubles, ints, size));
    }

    /** The array read so far as a plain array node (more elements of other kinds follow). */
    ArrayNode toArrayNode() {
      ArrayNode a = JsonNodeFactory.instance.arrayNode(size + 8);
      for (int i = 0; i < size; i++) {
        a.add(node(doubles[i], ints[i]));
      }
      return a;
    }
  }

  private static JsonNode node(double v, boolean isInt) {
    return isInt ? IntNode.valueOf((int) v) : DoubleNode.valueOf(v);
  }

  /** The element list: values until the first change, nodes after it. */
  private static final class Values extends AbstractList<JsonNode> implements RandomAccess {
    private final double[] doubles;
    private final boolean[] ints;
    private final int size;
    private List<JsonNode> nodes; // after a change

    Values(double[] doubles, boolean[] ints, int size) {
      this.doubles = doubles;
      this.ints = ints;
      this.size = size;
    }

    private List<JsonNode> nodes() {
      if (nodes == null) {
        List<JsonNode> l = new ArrayList<>(size + 8);
        for (int i = 0; i < size; i++) {
          l.add(node(doubles[i], ints[i]));
        }
        nodes = l;
      }
      modCount++;
      return nodes;
    }

    @Override
    public JsonNode get(int i) {
      if (nodes != null) {
        return nodes.get(i);
      }
      if (i < 0 || i >= size) {
        throw new IndexOutOfBoundsException("index " + i + ", size " + size);
      }
      return node(doubles[i], ints[i]);
    }

    @Override
    public int size() {
      return nodes != null ? nodes.size() : size;
    }

    @Override
    public JsonNode set(int i, JsonNode n) {
      return nodes().set(i, n);
    }

    @Override
    public void add(int i, JsonNode n) {
      nodes().add(i, n);
    }

    @Override
    public JsonNode remove(int i) {
      return nodes().remove(i);
    }

    @Override
    public void clear() {
      nodes().clear();
    }
  }
}
