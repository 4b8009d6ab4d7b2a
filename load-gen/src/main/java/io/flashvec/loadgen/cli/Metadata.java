package io.flashvec.loadgen.cli;

import io.flashvec.loadgen.dataset.Dataset;
import io.flashvec.loadgen.internal.MachineInfo;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;

/** The metadata block at the top of every JSON result. */
final class Metadata {
  private Metadata() {}

  static Map<String, Object> of(String kind, Dataset d, ClientOptions client) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("kind", kind);
    m.put("dataset", d.source().toString());
    m.put("dataset_name", d.name());
    m.put("n", d.size());
    m.put("dim", d.dim());
    m.put("queries", d.queries().length);
    m.put("distance", d.distance().apiName());
    m.put("target", client.target);
    if (client.system != null && !client.system.isBlank()) {
      m.put("system", client.system);
    }
    m.put("url", client.describe());
    m.put("collection", client.collection);
    m.put("date", OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.SECONDS).toString());
    m.put("machine", MachineInfo.describe());
    return m;
  }
}
