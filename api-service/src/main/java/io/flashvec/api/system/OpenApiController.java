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
 * /openapi.yaml}) and converted to JSON ({@code GET /openapi.json}). Both are read once at
 * start-up; a missing or malformed document fails the start rather than the request.
 */
@RestController
public class OpenApiController {

  /** Where the document lives on the classpath. */
  static final String RESOURCE = "static/openapi.yaml";

  static final MediaType YAML = MediaType.parseMediaType("application/yaml");

  private final byte[] yaml;
  private final byte[] json;

  OpenApiController() {
    this.yaml = load();
    this.json = Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(parse(yaml));
  }

  @GetMapping("/openapi.yaml")
  ResponseEntity<byte[]> yaml() {
    return ResponseEntity.ok().contentType(YAML).cacheControl(CacheControl.noCache()).body(yaml);
  }

  @GetMapping("/openapi.json")
  ResponseEntity<byte[]> json() {
    return ResponseEntity.ok()
        .contentType(MediaType.APPLICATION_JSON)
        .cacheControl(CacheControl.noCache())
        .body(json);
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
