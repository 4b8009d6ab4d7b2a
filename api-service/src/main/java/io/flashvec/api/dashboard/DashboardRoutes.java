package io.flashvec.api.dashboard;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.Properties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * Serves the dashboard: {@code GET /dashboard} redirects to {@code /dashboard/} (the pages load
 * their modules by relative URLs), which answers {@code index.html}; {@code /dashboard/**} are the
 * files under {@code classpath:dashboard/}, and {@code /dashboard/vendor/uplot/**} the {@code
 * dist/} folder of the uPlot WebJar, found by the version in the WebJar's own {@code
 * pom.properties} so that a version bump in the pom needs no change here. Everything is answered
 * with {@code Cache-Control: no-cache}: the files are small, and a server upgrade must not leave a
 * browser with old modules.
 *
 * <p>These are static files, not REST operations, so they are routes rather than controller
 * handlers and are not part of the OpenAPI document. They load without the API key, as Qdrant's web
 * UI does ({@code web.ApiKeyFilter}); every call the pages make to the API carries the key the user
 * typed in.
 */
@Configuration(proxyBeanMethods = false)
public class DashboardRoutes {

  /** The URL path of the dashboard. */
  public static final String PATH = "/dashboard";

  static final String PAGES = "dashboard/";

  static final String UPLOT_POM = "META-INF/maven/org.webjars.npm/uplot/pom.properties";

  @Bean
  RouterFunction<ServerResponse> dashboard() {
    Resource index = new ClassPathResource(PAGES + "index.html");
    if (!index.exists()) {
      throw new IllegalStateException("dashboard pages missing [resource=" + PAGES + "index.html]");
    }
    String dist = uplotDist();
    if (!new ClassPathResource(dist + "uPlot.esm.js").exists()) {
      throw new IllegalStateException("uPlot WebJar incomplete [folder=" + dist + "]");
    }
    Resource uplot = new ClassPathResource(dist);
    return RouterFunctions.route()
        .GET(PATH, r -> ServerResponse.permanentRedirect(URI.create(PATH + "/")).build())
        .GET(
            PATH + "/",
            r ->
                ServerResponse.ok()
                    .contentType(MediaType.TEXT_HTML)
                    .cacheControl(CacheControl.noCache())
                    .bodyValue(index))
        .add(
            RouterFunctions.resources(
                PATH + "/vendor/uplot/**", uplot, (res, h) -> h.setCacheControl(noCache())))
        .add(
            RouterFunctions.resources(
                PATH + "/**",
                new ClassPathResource(PAGES),
                (res, h) -> h.setCacheControl(noCache())))
        .build();
  }

  private static String noCache() {
    return CacheControl.noCache().getHeaderValue();
  }

  /** The classpath folder of uPlot's distribution files, e.g. {@code .../uplot/1.6.30/dist/}. */
  static String uplotDist() {
    try (InputStream in = DashboardRoutes.class.getClassLoader().getResourceAsStream(UPLOT_POM)) {
      if (in == null) {
        throw new IllegalStateException("uPlot WebJar missing [resource=" + UPLOT_POM + "]");
      }
      Properties p = new Properties();
      p.load(in);
      String version = p.getProperty("version");
      if (version == null || version.isBlank()) {
        throw new IllegalStateException("uPlot WebJar has no version [resource=" + UPLOT_POM + "]");
      }
      return "META-INF/resources/webjars/uplot/" + version + "/dist/";
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + UPLOT_POM, e);
    }
  }
}
