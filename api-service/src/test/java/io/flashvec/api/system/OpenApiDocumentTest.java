package io.flashvec.api.system;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Controller;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.ClassUtils;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;

/**
 * Keeps {@code static/openapi.yaml} in step with the code: every handler mapping found by
 * reflection on the controllers in {@code io.flashvec.api} must be documented with its query
 * parameters, and every documented operation must exist (apart from the actuator's {@code
 * /metrics}). Plain JUnit, no Spring context.
 */
class OpenApiDocumentTest {

  /** Documented operations that are not served by a controller of ours. */
  private static final Set<String> NOT_FROM_CONTROLLERS = Set.of("GET /metrics");

  private static final Set<String> HTTP_METHODS =
      Set.of("get", "put", "post", "delete", "patch", "head", "options", "trace");

  private static final Pattern TEMPLATE_VAR = Pattern.compile("\\{([^}/]+)}");

  private static Map<String, Object> doc;

  /** "METHOD /path" -> the handler, from reflection. */
  private static Map<String, Method> handlers;

  @BeforeAll
  static void load() throws Exception {
    doc = map(OpenApiController.parse(OpenApiController.load()), "document");
    handlers = scanHandlers();
  }

  @Test
  void isOpenApi31WithTheServerVersion() {
    assertThat(doc.get("openapi")).isEqualTo("3.1.0");
    Map<String, Object> info = map(doc.get("info"), "info");
    assertThat(info.get("title")).isInstanceOf(String.class);
    assertThat(info.get("version")).isEqualTo(SystemController.VERSION);
  }

  @Test
  void reflectionFindsTheControllers() {
    // Guards the scan itself: if it found nothing, the coverage test below would pass vacuously.
    assertThat(handlers)
        .containsKeys(
            "GET /",
            "PUT /collections/{name}",
            "PUT /collections/{name}/points",
            "POST /collections/{name}/points/query",
            "POST /collections/{name}/flush",
            "GET /openapi.json");
  }

  @Test
  void everyControllerEndpointIsDocumented() {
    Set<String> documented = documentedOperations().keySet();
    Set<String> missing = new TreeSet<>(handlers.keySet());
    missing.removeAll(documented);
    assertThat(missing).as("endpoints served but not in openapi.yaml").isEmpty();
  }

  @Test
  void everyDocumentedEndpointIsServed() {
    Set<String> extra = new TreeSet<>(documentedOperations().keySet());
    extra.removeAll(handlers.keySet());
    extra.removeAll(NOT_FROM_CONTROLLERS);
    assertThat(extra).as("endpoints in openapi.yaml that no controller serves").isEmpty();
  }

  @Test
  void everyRequestParamIsDocumented() {
    Map<String, Operation> ops = documentedOperations();
    List<String> problems = new ArrayList<>();
    for (var e : handlers.entrySet()) {
      Operation op = ops.get(e.getKey());
      if (op == null) {
        continue; // reported by everyControllerEndpointIsDocumented
      }
      for (Parameter p : e.getValue().getParameters()) {
        RequestParam rp = AnnotatedElementUtils.findMergedAnnotation(p, RequestParam.class);
        if (rp == null) {
          continue;
        }
        String name = !rp.name().isEmpty() ? rp.name() : p.getName();
        if (!op.parameterNames("query").contains(name)) {
          problems.add(e.getKey() + " ?" + name);
        }
      }
    }
    assertThat(problems).as("query parameters read by handlers but not documented").isEmpty();
  }

  @Test
  void pathParametersMatchTheTemplates() {
    List<String> problems = new ArrayList<>();
    for (var e : documentedOperations().entrySet()) {
      String path = e.getValue().path();
      Set<String> vars = new TreeSet<>();
      Matcher m = TEMPLATE_VAR.matcher(path);
      while (m.find()) {
        vars.add(m.group(1));
      }
      Set<String> declared = e.getValue().parameterNames("path");
      if (!declared.equals(vars)) {
        problems.add(e.getKey() + " template=" + vars + " declared=" + declared);
      }
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void everyOperationHasAUniqueIdAndResponses() {
    Map<String, String> ids = new TreeMap<>();
    List<String> problems = new ArrayList<>();
    for (var e : documentedOperations().entrySet()) {
      Map<String, Object> op = e.getValue().operation();
      Object id = op.get("operationId");
      if (!(id instanceof String s) || s.isBlank()) {
        problems.add(e.getKey() + ": no operationId");
      } else if (ids.put(s, e.getKey()) != null) {
        problems.add(e.getKey() + ": duplicate operationId " + s);
      }
      Map<String, Object> responses = map(op.get("responses"), e.getKey() + " responses");
      if (responses.isEmpty()) {
        problems.add(e.getKey() + ": no responses");
      }
      for (String code : responses.keySet()) {
        if (!code.matches("[1-5][0-9][0-9]|default")) {
          problems.add(e.getKey() + ": bad response code " + code);
        }
      }
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void everyRefResolves() {
    List<String> refs = new ArrayList<>();
    collectRefs(doc, refs);
    assertThat(refs).isNotEmpty();
    List<String> broken = new ArrayList<>();
    for (String ref : refs) {
      if (!ref.startsWith("#/") || resolve(ref) == null) {
        broken.add(ref);
      }
    }
    assertThat(broken).as("$refs that do not resolve").isEmpty();
  }

  @Test
  void documentsTheEnvelopeAndTheErrorShape() {
    Map<String, Object> schemas =
        map(map(doc.get("components"), "components").get("schemas"), "schemas");
    Map<String, Object> ok = map(schemas.get("OkEnvelope"), "OkEnvelope");
    assertThat(ok.get("required")).isEqualTo(List.of("result", "status", "time"));
    Map<String, Object> error = map(schemas.get("ErrorResponse"), "ErrorResponse");
    assertThat(error.get("required")).isEqualTo(List.of("status", "time"));
    Map<String, Object> responses =
        map(map(doc.get("components"), "components").get("responses"), "responses");
    assertThat(responses)
        .containsKeys("BadRequest", "NotFound", "Conflict", "TooLarge", "Unavailable");
  }

  @Test
  void servesYamlAndJson() {
    WebTestClient client = WebTestClient.bindToController(new OpenApiController()).build();
    client
        .get()
        .uri("/openapi.yaml")
        .exchange()
        .expectStatus()
        .isOk()
        .expectHeader()
        .contentTypeCompatibleWith(OpenApiController.YAML)
        .expectBody(byte[].class)
        .isEqualTo(OpenApiController.load());
    client
        .get()
        .uri("/openapi.json")
        .accept(MediaType.APPLICATION_JSON)
        .exchange()
        .expectStatus()
        .isOk()
        .expectHeader()
        .contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
        .expectBody()
        .jsonPath("$.openapi")
        .isEqualTo("3.1.0")
        .jsonPath("$.info.version")
        .isEqualTo(SystemController.VERSION)
        .jsonPath("$.paths['/collections/{name}/points'].put.operationId")
        .isEqualTo("upsert_points")
        .jsonPath("$.paths['/collections'].get.responses['200']")
        .exists();
  }

  // ------------------------------------------------------------------------------------------

  /** A documented operation with its path item (for path-level parameters). */
  private record Operation(
      String path, Map<String, Object> pathItem, Map<String, Object> operation) {

    /** Names of the parameters {@code in} the given location, path-level and operation-level. */
    Set<String> parameterNames(String in) {
      Set<String> names = new TreeSet<>();
      for (Map<String, Object> holder : List.of(pathItem, operation)) {
        Object params = holder.get("parameters");
        if (params == null) {
          continue;
        }
        for (Object p : (List<?>) params) {
          Map<String, Object> param = map(p, path + " parameter");
          if (param.get("$ref") instanceof String ref) {
            param = map(resolve(ref), ref);
          }
          if (in.equals(param.get("in"))) {
            names.add((String) param.get("name"));
          }
        }
      }
      return names;
    }
  }

  private static Map<String, Operation> documentedOperations() {
    Map<String, Operation> out = new LinkedHashMap<>();
    Map<String, Object> paths = map(doc.get("paths"), "paths");
    for (var p : paths.entrySet()) {
      Map<String, Object> item = map(p.getValue(), p.getKey());
      for (var m : item.entrySet()) {
        if (HTTP_METHODS.contains(m.getKey())) {
          out.put(
              m.getKey().toUpperCase(Locale.ROOT) + " " + p.getKey(),
              new Operation(p.getKey(), item, map(m.getValue(), p.getKey() + " " + m.getKey())));
        }
      }
    }
    return out;
  }

  /** Every handler method of every {@code @Controller} under {@code io.flashvec.api}. */
  private static Map<String, Method> scanHandlers() throws ClassNotFoundException {
    var scanner = new ClassPathScanningCandidateComponentProvider(false);
    scanner.addIncludeFilter(new AnnotationTypeFilter(Controller.class));
    Map<String, Method> out = new TreeMap<>();
    for (BeanDefinition bd : scanner.findCandidateComponents("io.flashvec.api")) {
      Class<?> type = ClassUtils.forName(bd.getBeanClassName(), null);
      RequestMapping typeMapping =
          AnnotatedElementUtils.findMergedAnnotation(type, RequestMapping.class);
      List<String> prefixes =
          typeMapping == null || typeMapping.path().length == 0
              ? List.of("")
              : List.of(typeMapping.path());
      for (Method m : type.getDeclaredMethods()) {
        RequestMapping mapping =
            AnnotatedElementUtils.findMergedAnnotation(m, RequestMapping.class);
        if (mapping == null) {
          continue;
        }
        assertThat(mapping.method())
            .as("%s must name its HTTP method (use @GetMapping, @PostMapping, ...)", m)
            .isNotEmpty();
        List<String> paths = mapping.path().length == 0 ? List.of("") : List.of(mapping.path());
        for (String prefix : prefixes) {
          for (String path : paths) {
            String full = prefix + path;
            if (full.isEmpty()) {
              full = "/";
            }
            for (var method : mapping.method()) {
              out.put(method.name() + " " + full, m);
            }
          }
        }
      }
    }
    return out;
  }

  private static void collectRefs(Object node, List<String> out) {
    if (node instanceof Map<?, ?> m) {
      for (var e : m.entrySet()) {
        if ("$ref".equals(e.getKey()) && e.getValue() instanceof String s) {
          out.add(s);
        } else {
          collectRefs(e.getValue(), out);
        }
      }
    } else if (node instanceof List<?> l) {
      for (Object o : l) {
        collectRefs(o, out);
      }
    }
  }

  /** Resolves a local JSON pointer such as {@code #/components/schemas/PointId}, or null. */
  private static Object resolve(String ref) {
    Object node = doc;
    for (String token : ref.substring(2).split("/")) {
      String key = token.replace("~1", "/").replace("~0", "~");
      if (!(node instanceof Map<?, ?> m) || !m.containsKey(key)) {
        return null;
      }
      node = m.get(key);
    }
    return node;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o, String what) {
    assertThat(o).as(what + " must be a mapping").isInstanceOf(Map.class);
    Map<?, ?> m = (Map<?, ?>) o;
    for (Object k : m.keySet()) {
      assertThat(k)
          .as("keys of " + what + " must be strings (quote numbers)")
          .isInstanceOf(String.class);
    }
    return (Map<String, Object>) m;
  }
}
