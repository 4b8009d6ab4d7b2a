package io.flashvec.api.search;

import io.flashvec.api.web.Json;
import io.flashvec.api.web.Requests;
import io.flashvec.index.InvalidInputException;
import io.flashvec.index.PointId;
import io.flashvec.index.filter.Condition;
import io.flashvec.index.filter.FieldPath;
import io.flashvec.index.filter.Filter;
import io.flashvec.index.filter.FilterEvaluator;
import io.flashvec.index.filter.FilterParser;
import io.flashvec.index.filter.Geo;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Qdrant's formula query ({@code {"formula": expression, "defaults": {...}}}): rescores the union
 * of a node's prefetch results with an arithmetic expression over their scores ({@code $score},
 * {@code $score[i]}), payload values, filter conditions (1 when the point matches, else 0), geo
 * distances, datetimes and decay functions. Results are ranked by the formula's value, highest
 * first.
 *
 * <p>Evaluation follows Qdrant's {@code FormulaScorer}, in double precision, the final score as a
 * float: a product stops at its first zero factor and a quotient with a zero dividend is 0 (so
 * neither evaluates the rest); a score missing from a prefetch's results is the default given for
 * it, else 0; a payload variable is the one value its path reaches (nulls aside; an array of one is
 * that element), else its default, else the request fails with Qdrant's message, as it does when an
 * expression produces a non-finite number.
 *
 * <p>Immutable once parsed; {@link #score} is thread-safe.
 */
final class Formula {

  /** A parsed expression. */
  sealed interface Expr {}

  record Constant(double value) implements Expr {}

  /** {@code $score[prefetch]}. */
  record Score(int prefetch) implements Expr {}

  /** A payload value by path; {@code name} is the path as written. */
  record Variable(String name, FieldPath path) implements Expr {}

  /** A filter condition; its index in {@link Formula#conditions}. */
  record Matches(int index) implements Expr {}

  record GeoDistance(Condition.GeoPoint origin, String name, FieldPath to) implements Expr {}

  /** Seconds since the epoch of a constant datetime, or of a payload value when {@code key}. */
  record Datetime(Instant constant, String name, FieldPath key) implements Expr {}

  record Mult(List<Expr> factors) implements Expr {}

  record Sum(List<Expr> terms) implements Expr {}

  record Div(Expr left, Expr right, Double byZeroDefault) implements Expr {}

  record Pow(Expr base, Expr exponent) implements Expr {}

  /** neg, abs, sqrt, exp, log10, ln. */
  record Unary(String op, Expr arg) implements Expr {}

  /** lin_decay, exp_decay, gauss_decay with Qdrant's lambda from midpoint and scale. */
  record Decay(String kind, Expr x, Expr target, double lambda) implements Expr {}

  private static final Set<String> EXPRESSIONS =
      Set.of(
          "geo_distance",
          "datetime",
          "datetime_key",
          "mult",
          "sum",
          "neg",
          "abs",
          "div",
          "sqrt",
          "pow",
          "exp",
          "log10",
          "ln",
          "lin_decay",
          "exp_decay",
          "gauss_decay");

  private static final Pattern SCORE = Pattern.compile("\\$score(?:\\[(\\d+)])?");

  private final Expr root;
  private final List<Filter> conditions;
  private final Map<Integer, Double> scoreDefaults;
  private final Map<String, JsonNode> payloadDefaults;

  private Formula(
      Expr root,
      List<Filter> conditions,
      Map<Integer, Double> scoreDefaults,
      Map<String, JsonNode> payloadDefaults) {
    this.root = root;
    this.conditions = List.copyOf(conditions);
    this.scoreDefaults = Map.copyOf(scoreDefaults);
    this.payloadDefaults = Map.copyOf(payloadDefaults);
  }

  /** Whether a query object is a formula query. */
  static boolean is(JsonNode q) {
    return q != null && q.isObject() && q.has("formula");
  }

  /** The filter conditions the formula uses, in {@link Matches#index} order. */
  List<Filter> conditions() {
    return conditions;
  }

  /**
   * Parses {@code {"formula": ..., "defaults": {...}}}.
   *
   * @param field how the query is named in messages
   */
  static Formula parse(JsonNode q, String field) {
    for (String k : q.propertyNames()) {
      if (!k.equals("formula") && !k.equals("defaults")) {
        throw Requests.invalid(
            "unknown field `" + k + "` of a formula query; expected formula, defaults",
            field + "." + k,
            q.get(k));
      }
    }
    List<Filter> conditions = new ArrayList<>();
    Expr root = expr(q.get("formula"), field + ".formula", conditions);
    Map<Integer, Double> scoreDefaults = new HashMap<>();
    Map<String, JsonNode> payloadDefaults = new HashMap<>();
    JsonNode d = q.get("defaults");
    if (d != null && !d.isNull()) {
      if (!d.isObject()) {
        throw Requests.invalid("defaults must be an object", field + ".defaults", d);
      }
      for (var e : d.properties()) {
        String key = e.getKey();
        String at = field + ".defaults." + key;
        if (key.startsWith("$")) {
          Matcher m = SCORE.matcher(key);
          if (!m.matches()) {
            throw Requests.invalid("Invalid reserved variable: " + key, at, e.getValue());
          }
          if (!e.getValue().isNumber()) {
            throw Requests.invalid("the default of a score must be a number", at, e.getValue());
          }
          scoreDefaults.put(prefetch(m), e.getValue().doubleValue());
        } else {
          FieldPath.parse(key, at);
          payloadDefaults.put(key, e.getValue());
        }
      }
    }
    return new Formula(root, conditions, scoreDefaults, payloadDefaults);
  }

  private static int prefetch(Matcher m) {
    if (m.group(1) == null) {
      return 0;
    }
    try {
      return Integer.parseInt(m.group(1));
    } catch (NumberFormatException e) {
      return Integer.MAX_VALUE; // no such prefetch: the default (or 0) applies
    }
  }

  private static Expr expr(JsonNode n, String at, List<Filter> conditions) {
    if (n == null || n.isNull()) {
      throw Requests.invalid("a formula expression is needed", at, n);
    }
    if (n.isNumber()) {
      return new Constant(n.doubleValue());
    }
    if (n.isString()) {
      String s = n.asString();
      if (s.startsWith("$")) {
        Matcher m = SCORE.matcher(s);
        if (!m.matches()) {
          throw Requests.invalid(
              "Invalid reserved variable: " + s + " (only $score and $score[i] are)", at, n);
        }
        return new Score(prefetch(m));
      }
      return new Variable(s, FieldPath.parse(s, at));
    }
    if (!n.isObject() || n.isEmpty()) {
      throw Requests.invalid(
          "a formula expression is a number, a variable, a condition or an expression object",
          at,
          n);
    }
    String op = n.propertyNames().iterator().next();
    if (!EXPRESSIONS.contains(op)) {
      // a filter condition: 1 when the point matches, else 0
      ObjectNode wrapped = Json.object();
      wrapped.putArray("must").add(n);
      conditions.add(FilterParser.parse(wrapped, at));
      return new Matches(conditions.size() - 1);
    }
    if (n.size() != 1) {
      throw Requests.invalid("an expression object has exactly one operator", at, n);
    }
    JsonNode arg = n.get(op);
    String a = at + "." + op;
    return switch (op) {
      case "mult", "sum" -> {
        if (!arg.isArray()) {
          throw Requests.invalid(op + " takes a list of expressions", a, arg);
        }
        List<Expr> items = new ArrayList<>();
        for (int i = 0; i < arg.size(); i++) {
          items.add(expr(arg.get(i), a + "[" + i + "]", conditions));
        }
        yield op.equals("mult") ? new Mult(List.copyOf(items)) : new Sum(List.copyOf(items));
      }
      case "neg", "abs", "sqrt", "exp", "log10", "ln" -> new Unary(op, expr(arg, a, conditions));
      case "div" -> {
        object(arg, a, "left", "right", "by_zero_default");
        JsonNode dz = arg.get("by_zero_default");
        if (dz != null && !dz.isNull() && !dz.isNumber()) {
          throw Requests.invalid("by_zero_default must be a number", a + ".by_zero_default", dz);
        }
        yield new Div(
            expr(arg.get("left"), a + ".left", conditions),
            expr(arg.get("right"), a + ".right", conditions),
            dz == null || dz.isNull() ? null : dz.doubleValue());
      }
      case "pow" -> {
        object(arg, a, "base", "exponent");
        yield new Pow(
            expr(arg.get("base"), a + ".base", conditions),
            expr(arg.get("exponent"), a + ".exponent", conditions));
      }
      case "geo_distance" -> {
        object(arg, a, "origin", "to");
        Condition.GeoPoint origin = Geo.point(arg.get("origin"));
        if (origin == null) {
          throw Requests.invalid(
              "origin must be a geo point {\"lat\": …, \"lon\": …} within range",
              a + ".origin",
              arg.get("origin"));
        }
        JsonNode to = arg.get("to");
        if (to == null || !to.isString()) {
          throw Requests.invalid("to must be a payload key", a + ".to", to);
        }
        yield new GeoDistance(origin, to.asString(), FieldPath.parse(to.asString(), a + ".to"));
      }
      case "datetime" -> {
        if (!arg.isString()) {
          throw Requests.invalid("datetime must be a string", a, arg);
        }
        yield new Datetime(datetime(arg.asString(), a, arg), null, null);
      }
      case "datetime_key" -> {
        if (!arg.isString()) {
          throw Requests.invalid("datetime_key must be a payload key", a, arg);
        }
        yield new Datetime(null, arg.asString(), FieldPath.parse(arg.asString(), a));
      }
      default -> decay(op, arg, a, conditions);
    };
  }

  private static Expr decay(String kind, JsonNode arg, String at, List<Filter> conditions) {
    object(arg, at, "x", "target", "scale", "midpoint");
    Expr x = expr(arg.get("x"), at + ".x", conditions);
    JsonNode t = arg.get("target");
    Expr target = t == null || t.isNull() ? null : expr(t, at + ".target", conditions);
    double midpoint = number(arg.get("midpoint"), 0.5, at + ".midpoint");
    double scale = number(arg.get("scale"), 1.0, at + ".scale");
    if (kind.equals("lin_decay")) {
      if (!(midpoint >= 0 && midpoint <= 1)) {
        throw Requests.invalid(
            "Linear decay midpoint should be in the range [0.0, 1.0], got " + midpoint,
            at + ".midpoint",
            arg.get("midpoint"));
      }
    } else if (!(midpoint > 0 && midpoint < 1)) {
      throw Requests.invalid(
          "Decay midpoint should be in the range (0.0, 1.0), got " + midpoint,
          at + ".midpoint",
          arg.get("midpoint"));
    }
    if (!(scale > 0)) {
      throw Requests.invalid(
          "Decay scale should be non-zero positive, got " + scale, at + ".scale", arg.get("scale"));
    }
    double lambda =
        switch (kind) {
          case "lin_decay" -> (1.0 - midpoint) / scale;
          case "exp_decay" -> Math.log(midpoint) / scale;
          default -> Math.log(midpoint) / (scale * scale);
        };
    return new Decay(kind, x, target, lambda);
  }

  /** A float parameter as Qdrant reads it (f32), or {@code dflt}. */
  private static double number(JsonNode n, double dflt, String at) {
    if (n == null || n.isNull()) {
      return dflt;
    }
    if (!n.isNumber()) {
      throw Requests.invalid("expected a number", at, n);
    }
    return (float) n.doubleValue();
  }

  private static void object(JsonNode n, String at, String... keys) {
    if (n == null || !n.isObject()) {
      throw Requests.invalid("expected an object with " + String.join(", ", keys), at, n);
    }
    Set<String> known = Set.of(keys);
    for (String k : n.propertyNames()) {
      if (!known.contains(k)) {
        throw Requests.invalid(
            "unknown field `" + k + "`; expected " + String.join(", ", keys), at + "." + k, n);
      }
    }
  }

  private static Instant datetime(String s, String at, JsonNode n) {
    try {
      return FilterParser.parseDatetime(s);
    } catch (RuntimeException e) {
      throw Requests.invalid("not a datetime (RFC 3339 or a date)", at, n);
    }
  }

  /** What one point brings to the formula. */
  record Point(PointId id, JsonNode payload) {}

  /**
   * The formula's value for one point.
   *
   * @param prefetchScores each prefetch's scores by point id
   * @param matches each condition's matching ids
   * @throws InvalidInputException a variable with neither a value nor a default, or a non-finite
   *     result (Qdrant's messages)
   */
  float score(Point p, List<Map<PointId, Float>> prefetchScores, List<Set<PointId>> matches) {
    double v = eval(root, p, prefetchScores, matches);
    float f = (float) v;
    if (!Float.isFinite(f)) {
      throw nonFinite(v + " as f32 = " + f);
    }
    return f;
  }

  private double eval(
      Expr e, Point p, List<Map<PointId, Float>> scores, List<Set<PointId>> matches) {
    return switch (e) {
      case Constant c -> c.value();
      case Score s -> {
        Float got = s.prefetch() < scores.size() ? scores.get(s.prefetch()).get(p.id()) : null;
        yield got != null ? got : scoreDefaults.getOrDefault(s.prefetch(), 0.0);
      }
      case Variable v -> {
        JsonNode value = value(p, v.name(), v.path(), "number");
        if (!value.isNumber()) {
          throw typeError(v.name(), "number", "Value is not a number");
        }
        yield value.doubleValue();
      }
      case Matches m -> matches.get(m.index()).contains(p.id()) ? 1.0 : 0.0;
      case GeoDistance g -> {
        Condition.GeoPoint to = Geo.point(value(p, g.name(), g.to(), "geo point"));
        if (to == null) {
          throw typeError(g.name(), "geo point", "Value is not a geo point");
        }
        yield Geo.distanceMeters(g.origin(), to);
      }
      case Datetime d -> {
        Instant t = d.constant();
        if (t == null) {
          JsonNode value = value(p, d.name(), d.key(), "datetime");
          if (!value.isString()) {
            throw typeError(d.name(), "datetime", "Value is not a string");
          }
          try {
            t = FilterParser.parseDatetime(value.asString());
          } catch (RuntimeException ex) {
            throw typeError(d.name(), "datetime", "not a datetime: " + value.asString());
          }
        }
        long micros = t.getEpochSecond() * 1_000_000L + t.getNano() / 1_000;
        yield micros / 1_000_000.0;
      }
      case Mult m -> {
        double product = 1.0;
        for (Expr f : m.factors()) {
          double x = eval(f, p, scores, matches);
          if (x == 0.0) {
            yield 0.0;
          }
          product *= x;
        }
        yield product;
      }
      case Sum s -> {
        double sum = 0.0;
        for (Expr t : s.terms()) {
          sum += eval(t, p, scores, matches);
        }
        yield sum;
      }
      case Div d -> {
        double left = eval(d.left(), p, scores, matches);
        if (left == 0.0) {
          yield 0.0;
        }
        double right = eval(d.right(), p, scores, matches);
        if (right == 0.0 && d.byZeroDefault() != null) {
          yield d.byZeroDefault();
        }
        yield finite(left / right, left + "/" + right);
      }
      case Pow w -> {
        double base = eval(w.base(), p, scores, matches);
        double exponent = eval(w.exponent(), p, scores, matches);
        yield finite(Math.pow(base, exponent), base + "^" + exponent);
      }
      case Unary u -> {
        double x = eval(u.arg(), p, scores, matches);
        yield switch (u.op()) {
          case "neg" -> -x;
          case "abs" -> Math.abs(x);
          case "sqrt" -> finite(Math.sqrt(x), "√" + x);
          case "exp" -> finite(Math.exp(x), "exp(" + x + ")");
          case "log10" -> finite(Math.log10(x), "log10(" + x + ")");
          default -> finite(Math.log(x), "ln(" + x + ")");
        };
      }
      case Decay d -> {
        double x = eval(d.x(), p, scores, matches);
        double target = d.target() == null ? 0.0 : eval(d.target(), p, scores, matches);
        double diff = x - target;
        yield switch (d.kind()) {
          case "lin_decay" -> Math.max(-d.lambda() * Math.abs(diff) + 1.0, 0.0);
          case "exp_decay" -> Math.exp(d.lambda() * Math.abs(diff));
          default -> Math.exp(d.lambda() * diff * diff);
        };
      }
    };
  }

  /**
   * The one value {@code path} reaches in the point's payload (arrays flattened, nulls left out),
   * else the default for {@code name}.
   */
  private JsonNode value(Point p, String name, FieldPath path, String expected) {
    List<JsonNode> values = new ArrayList<>();
    if (p.payload() != null) {
      for (JsonNode v : FilterEvaluator.values(path, p.payload())) {
        if (!v.isNull()) {
          values.add(v);
        }
      }
    }
    if (values.size() == 1) {
      return values.getFirst();
    }
    if (values.size() > 1) {
      throw typeError(name, expected, "Value is not a " + expected);
    }
    JsonNode d = payloadDefaults.get(name);
    if (d == null) {
      throw typeError(name, expected, "No value found in a payload nor defaults");
    }
    return d;
  }

  private static InvalidInputException typeError(String field, String type, String description) {
    return new InvalidInputException(
        "Bad request: Expected "
            + type
            + " value for "
            + field
            + " in the payload and/or in the formula defaults. Error: "
            + description);
  }

  private static double finite(double v, String expression) {
    if (!Double.isFinite(v)) {
      throw nonFinite(expression + " = " + v);
    }
    return v;
  }

  private static InvalidInputException nonFinite(String expression) {
    return new InvalidInputException(
        "Bad request: The expression " + expression + " produced a non-finite number");
  }
}
