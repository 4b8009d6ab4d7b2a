package io.flashvec.api.system;

import io.flashvec.api.web.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Serves the OpenAPI document, {@code classpath:static/openapi.yaml}, as written ({@code GET
 * /openapi.yaml}) and converted to JSON ({@code GET /openapi.json}). The YAML is read at start-up
 * (a missing document fails the start); the JSON is converted on first request and kept, as parsing
 * the whole document took about a tenth of the start-up's main thread. {@code OpenApiDocumentTest}
 * parses it in the build, so a malformed document fails there.
 */
@RestController
public class OpenApiController {

  /** Where the document lives on the classpath. */
  static final String RESOURCE = "static/openapi.yaml";

  static final MediaType YAML = MediaType.parseMediaType("application/yaml");

  private final byte[] yaml;

  /** The JSON form, converted on first request; racing first requests convert it twice, alike. */
  private volatile byte[] json;

  OpenApiController() {
    this.yaml = load();
  }

  @GetMapping("/openapi.yaml")
  ResponseEntity<byte[]> yaml() {
    return ResponseEntity.ok().contentType(YAML).cacheControl(CacheControl.noCache()).body(yaml);
  }

  @GetMapping("/openapi.json")
  ResponseEntity<byte[]> jsonDocument() {
    return ResponseEntity.ok()
        .contentType(MediaType.APPLICATION_JSON)
        .cacheControl(CacheControl.noCache())
        .body(json());
  }

  private byte[] json() {
    byte[] j = json;
    if (j == null) {
      j = Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(parse(yaml));
      json = j;
    }
    return j;
  }

  /** The document's bytes from the classpath. */
  static byte[] load() {
    try (InputStream in = OpenApiController.class.getClassLoader().getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("OpenAPI document missing [resource=" + RESOURCE + "]");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read OpenAPI document [resource=" + RESOURCE + "]", e);
    }
  }

  /**
   * Parses YAML into maps, lists and scalars with SnakeYAML's safe constructor (no arbitrary
   * types); duplicate keys are an error, so a path or schema cannot be defined twice.
   */
  static Object parse(byte[] yaml) {
    LoaderOptions options = new LoaderOptions();
    options.setAllowDuplicateKeys(false);
    return new Yaml(new SafeConstructor(options)).load(new String(yaml, StandardCharsets.UTF_8));
  }
}
